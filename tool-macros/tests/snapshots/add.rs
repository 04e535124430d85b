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
    #[derive(::tool_runtime::__private::schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(
        crate = "::tool_runtime::__private::schemars",
        bound = "__T0: ::tool_runtime::__private::ParamSchema"
    )]
    struct __ToolArgs<__T0> {
        cursor: __T0,
    }
    struct __ToolSlots<__T0>(::tool_runtime::__private::Option<__T0>);
    const __TOOL_PARAMS: ::tool_runtime::__private::ParamTable = ::tool_runtime::__private::ParamTable {
        keys: &["cursor"],
        params: &[0usize],
        names: &["cursor"],
    };
    impl<
        __T0: ::tool_runtime::__private::ParamDeserialize,
    > ::tool_runtime::__private::ParamSlots for __ToolSlots<__T0> {
        fn set(
            &mut self,
            __index: usize,
            __input: ::tool_runtime::__private::FieldInput<'_>,
        ) -> ::tool_runtime::__private::Result<
            (),
            ::tool_runtime::__private::FieldError,
        > {
            match __index {
                0 => ::tool_runtime::__private::read_param(&mut self.0, __input),
                _ => ::tool_runtime::__private::Result::Ok(()),
            }
        }
        fn finish(
            &mut self,
        ) -> ::tool_runtime::__private::Result<
            (),
            ::tool_runtime::__private::serde_json::Error,
        > {
            if self.0.is_none() {
                self.0 = ::tool_runtime::__private::Option::Some(
                    ::tool_runtime::__private::missing_param("cursor")?,
                );
            }
            ::tool_runtime::__private::Result::Ok(())
        }
        fn clear(&mut self) {
            self.0 = ::tool_runtime::__private::Option::None;
        }
    }
    fn __tool_parse<__T0: ::tool_runtime::__private::ParamDeserialize>(
        __args: ::tool_runtime::__private::ToolArgs<'_>,
    ) -> ::tool_runtime::__private::Result<
        __ToolArgs<__T0>,
        ::tool_runtime::__private::ToolError,
    > {
        let mut __slots = __ToolSlots::<__T0>(::tool_runtime::__private::Option::None);
        ::tool_runtime::__private::parse_params(__args, &__TOOL_PARAMS, &mut __slots)?;
        match __slots {
            __ToolSlots(::tool_runtime::__private::Option::Some(__value0)) => {
                ::tool_runtime::__private::Result::Ok(__ToolArgs { cursor: __value0 })
            }
            #[allow(unreachable_patterns)]
            _ => {
                ::tool_runtime::__private::Result::Err(
                    ::tool_runtime::__private::params_incomplete(),
                )
            }
        }
    }
    fn __tool_schema<__T0: ::tool_runtime::__private::ParamSchema>() -> ::tool_runtime::__private::serde_json::Value {
        ::tool_runtime::__private::input_schema_from(
            <__ToolArgs<
                __T0,
            > as ::tool_runtime::__private::schemars::JsonSchema>::schema_name,
            <__ToolArgs<
                __T0,
            > as ::tool_runtime::__private::schemars::JsonSchema>::json_schema,
        )
    }
    struct __ToolReturns;
    impl ::tool_runtime::__private::Returns for __ToolReturns {
        type Ok = Page<u32>;
        type Err = ::tool_runtime::__private::Infallible;
    }
    impl ::tool_runtime::__private::PageReturns for __ToolReturns {}
    fn __tool_output_schema() -> ::tool_runtime::__private::Option<
        ::tool_runtime::__private::serde_json::Value,
    > {
        #[allow(unused_imports)]
        use ::tool_runtime::__private::{HasOutputSchema as _, NoOutputSchema as _};
        (&::tool_runtime::__private::OutputSchemaProbe::<
            <__ToolReturns as ::tool_runtime::__private::Returns>::Ok,
        >::new())
            .output_schema()
    }
    static __TOOL: ::tool_runtime::__private::FnTool = ::tool_runtime::__private::FnTool::new(
        ::tool_runtime::__private::ToolDecl {
            name: "add-numbers",
            description: "Adds.",
            execution: ::tool_runtime::__private::ToolExecution {
                read_only: false,
                mutates_workspace: false,
                exclusive: false,
                stateful_action: true,
                pagination: true,
            },
            hints: ::tool_runtime::__private::ToolHints {
                idempotent: false,
                destructive: false,
                open_world: false,
            },
            risk: ::tool_runtime::__private::RiskLevel::Write,
            location: ::tool_runtime::__private::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
            ..::tool_runtime::__private::ToolDecl::UNSET
        },
        __tool_schema::<Option<String>>,
        __tool_output_schema,
        <Option<
            &mut RunContext,
        > as ::tool_runtime::__private::ContextParam<'_>>::deps_type,
        true,
        __tool_prepare,
    );
    fn __tool_prepare(
        __args: ::tool_runtime::__private::ToolArgs<'_>,
        __call: &::tool_runtime::__private::CallContext,
    ) -> ::tool_runtime::__private::Result<
        ::tool_runtime::__private::ToolFuture,
        ::tool_runtime::__private::ToolError,
    > {
        let __parsed = __tool_parse::<Option<String>>(__args)?;
        let __context = <Option<
            &mut RunContext,
        > as ::tool_runtime::__private::ContextParam<'_>>::storage(__call.clone())?;
        ::tool_runtime::__private::box_future(async move {
            let __ToolArgs { cursor: __arg0 } = __parsed;
            let __result = {
                let mut __context = __context;
                add(
                    __arg0,
                    <Option<
                        &mut RunContext,
                    > as ::tool_runtime::__private::ContextParam<
                        '_,
                    >>::view(&mut __context),
                )
            };
            ::tool_runtime::__private::finish_page::<
                __ToolReturns,
            >(::tool_runtime::__private::Result::Ok(__result))
        })
    }
    impl ::tool_runtime::__private::ToolDef for add {
        const TOOL: &'static dyn ::tool_runtime::__private::Tool = &__TOOL;
    }
    ::tool_runtime::__private::inventory::submit! {
        ::tool_runtime::__private::ToolRegistration::new(& __TOOL)
    }
};
