/// Adds.
fn add(cursor: Option<String>, ctx: Option<&mut RunContext>) -> Page<u32> {
    todo!()
}
#[doc(hidden)]
#[allow(non_camel_case_types)]
struct add {}
#[allow(dead_code)]
impl add {
    /// The tool's definition.
    fn spec() -> &'static ::tool_runtime::__private::ToolSpec {
        <Self as ::tool_runtime::__private::ToolDef>::TOOL.spec()
    }
    /// The tool, for a registry or a direct call.
    fn tool() -> &'static dyn ::tool_runtime::__private::Tool {
        <Self as ::tool_runtime::__private::ToolDef>::TOOL
    }
}
#[allow(non_snake_case, unused_qualifications, clippy::all, clippy::pedantic)]
const _: () = {
    use ::tool_runtime::__private as __p;
    #[derive(__p::schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(crate = "__p::schemars", bound = "__T0: __p::ParamSchema")]
    struct __ToolArgs<__T0> {
        cursor: __T0,
    }
    struct __ToolSlots<__T0>(__p::Option<__T0>);
    const __TOOL_PARAMS: __p::ParamTable = __p::ParamTable {
        keys: &["cursor"],
        params: &[0usize],
        names: &["cursor"],
        plain: true,
    };
    impl<__T0: __p::ParamDeserialize> __p::ParamSlots for __ToolSlots<__T0> {
        fn set(
            &mut self,
            __index: usize,
            __input: __p::FieldInput<'_>,
        ) -> __p::Result<usize, __p::FieldError> {
            match __index {
                0 => __p::read_param(&mut self.0, __input),
                _ => __p::Result::Ok(0),
            }
        }
        fn set_value(
            &mut self,
            __index: usize,
            __value: &__p::serde_json::Value,
        ) -> __p::Result<(), __p::FieldError> {
            match __index {
                0 => __p::read_value(&mut self.0, __value),
                _ => __p::Result::Ok(()),
            }
        }
        fn finish(&mut self) -> __p::Result<(), __p::serde_json::Error> {
            __p::fill_missing(&mut self.0, "cursor")?;
            __p::Result::Ok(())
        }
    }
    fn __tool_parse<__T0: __p::ParamDeserialize>(
        __args: __p::ToolArgs<'_>,
    ) -> __p::Result<__ToolArgs<__T0>, __p::ToolError> {
        let mut __slots = __ToolSlots::<__T0>(__p::Option::None);
        __p::parse_params(__args, &__TOOL_PARAMS, &mut __slots)?;
        match __slots {
            __ToolSlots(__p::Option::Some(__value0)) => {
                __p::Result::Ok(__ToolArgs { cursor: __value0 })
            }
            #[allow(unreachable_patterns)]
            _ => __p::Result::Err(__p::params_incomplete()),
        }
    }
    fn __tool_schema<__T0: __p::ParamSchema>() -> __p::serde_json::Value {
        __p::input_schema_from(
            <__ToolArgs<__T0> as __p::schemars::JsonSchema>::schema_name,
            <__ToolArgs<__T0> as __p::schemars::JsonSchema>::json_schema,
        )
    }
    struct __ToolReturns;
    impl __p::Returns for __ToolReturns {
        type Ok = Page<u32>;
        type Err = __p::Infallible;
    }
    impl __p::PageReturns for __ToolReturns {}
    fn __tool_output_schema() -> __p::Option<__p::serde_json::Value> {
        #[allow(unused_imports)]
        use __p::{HasOutputSchema as _, NoOutputSchema as _};
        (&__p::OutputSchemaProbe::<<__ToolReturns as __p::Returns>::Ok>::new())
            .output_schema()
    }
    static __TOOL: __p::FnTool = __p::FnTool::new(
        __p::ToolDecl {
            name: "add-numbers",
            description: "Adds.",
            execution: __p::ToolExecution {
                read_only: false,
                mutates_workspace: false,
                exclusive: false,
                stateful_action: true,
                pagination: true,
            },
            hints: __p::ToolHints {
                idempotent: false,
                destructive: false,
                open_world: false,
            },
            risk: __p::RiskLevel::Write,
            location: __p::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
            ..__p::ToolDecl::UNSET
        },
        __tool_schema::<Option<String>>,
        __tool_output_schema,
        <Option<&mut RunContext> as __p::ContextParam<'_>>::deps_type,
        true,
        __tool_prepare,
    );
    fn __tool_prepare(
        __args: __p::ToolArgs<'_>,
        __call: &__p::CallContext,
    ) -> __p::Result<__p::ToolFuture, __p::ToolError> {
        let __parsed = __tool_parse::<Option<String>>(__args)?;
        let __context = <Option<
            &mut RunContext,
        > as __p::ContextParam<'_>>::storage(__call.clone())?;
        __p::box_future(async move {
            let __ToolArgs { cursor: __arg0 } = __parsed;
            let __result = {
                let mut __context = __context;
                add(
                    __arg0,
                    <Option<
                        &mut RunContext,
                    > as __p::ContextParam<'_>>::view(&mut __context),
                )
            };
            __p::finish_page::<__ToolReturns>(__p::Result::Ok(__result))
        })
    }
    impl __p::ToolDef for add {
        const TOOL: &'static dyn __p::Tool = &__TOOL;
    }
    __p::inventory::submit! {
        __p::ToolRegistration::new(& __TOOL)
    }
};
