/// Look up one order.
pub async fn get_order_status(
    ctx: RunContext<SupportDeps>,
    order_id: String,
    include_items: bool,
) -> Result<OrderStatus, ToolError> {
    todo!()
}
#[doc(hidden)]
#[allow(non_camel_case_types)]
pub struct get_order_status {}
#[allow(dead_code)]
impl get_order_status {
    /// The tool's definition.
    pub fn spec() -> &'static ::tool_core::__private::ToolSpec {
        <Self as ::tool_core::__private::ToolDef>::TOOL.spec()
    }
    /// The tool, for a registry or a direct call.
    pub fn tool() -> &'static dyn ::tool_core::__private::Tool {
        <Self as ::tool_core::__private::ToolDef>::TOOL
    }
}
#[allow(non_snake_case, unused_qualifications, clippy::all, clippy::pedantic)]
const _: () = {
    use ::tool_core::__private as __p;
    const _: () = __p::assert_param::<bool>();
    #[derive(__p::schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(crate = "__p::schemars", bound = "__T0: __p::ParamSchema")]
    struct __ToolArgs<__T0> {
        /// Order id.
        order_id: __T0,
        /// Include the items.
        #[serde(default = "__tool_default_include_items")]
        include_items: bool,
    }
    struct __ToolSlots<__T0>(__p::Option<__T0>, __p::Option<bool>);
    const __TOOL_PARAMS: __p::ParamTable = __p::ParamTable {
        keys: &["order_id", "include_items"],
        params: &[0usize, 1usize],
        names: &["order_id", "include_items"],
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
                1 => __p::read_param(&mut self.1, __input),
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
                1 => __p::read_value(&mut self.1, __value),
                _ => __p::Result::Ok(()),
            }
        }
        fn finish(&mut self) -> __p::Result<(), __p::serde_json::Error> {
            __p::fill_missing(&mut self.0, "order_id")?;
            __p::fill_with(&mut self.1, __tool_default_include_items);
            __p::Result::Ok(())
        }
    }
    fn __tool_parse<__T0: __p::ParamDeserialize>(
        __args: __p::ToolArgs<'_>,
    ) -> __p::Result<__ToolArgs<__T0>, __p::ToolError> {
        let mut __slots = __ToolSlots::<__T0>(__p::Option::None, __p::Option::None);
        __p::parse_params(__args, &__TOOL_PARAMS, &mut __slots)?;
        match __slots {
            __ToolSlots(__p::Option::Some(__value0), __p::Option::Some(__value1)) => {
                __p::Result::Ok(__ToolArgs {
                    order_id: __value0,
                    include_items: __value1,
                })
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
    fn __tool_default_include_items() -> bool {
        false
    }
    struct __ToolReturns;
    impl __p::Returns for __ToolReturns {
        type Ok = <Result<OrderStatus, ToolError> as __p::ResultParts>::Ok;
        type Err = <Result<OrderStatus, ToolError> as __p::ResultParts>::Err;
    }
    fn __tool_output_schema() -> __p::Option<__p::serde_json::Value> {
        #[allow(unused_imports)]
        use __p::{HasOutputSchema as _, NoOutputSchema as _};
        (&__p::OutputSchemaProbe::<<__ToolReturns as __p::Returns>::Ok>::new())
            .output_schema()
    }
    static __TOOL: __p::FnTool = __p::FnTool::new(
        __p::ToolDecl {
            name: "get_order_status",
            description: "Look up one order.",
            execution: __p::ToolExecution {
                read_only: true,
                mutates_workspace: false,
                exclusive: false,
                stateful_action: false,
                pagination: false,
            },
            hints: __p::ToolHints {
                idempotent: true,
                destructive: false,
                open_world: false,
            },
            risk: __p::RiskLevel::Read,
            timeout: __p::Option::Some(__p::Duration::from_millis(5000u64)),
            location: __p::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
            ..__p::ToolDecl::UNSET
        },
        __tool_schema::<String>,
        __tool_output_schema,
        <RunContext<SupportDeps> as __p::ContextParam<'_>>::deps_type,
        true,
        __tool_prepare,
    );
    fn __tool_prepare(
        __args: __p::ToolArgs<'_>,
        __call: &__p::CallContext,
    ) -> __p::Result<__p::ToolFuture, __p::ToolError> {
        let __parsed = __tool_parse::<String>(__args)?;
        let __context = <RunContext<
            SupportDeps,
        > as __p::ContextParam<'_>>::storage(__call.clone())?;
        __p::box_future(async move {
            let __ToolArgs { order_id: __arg0, include_items: __arg1 } = __parsed;
            let __result = {
                let mut __context = __context;
                get_order_status(
                        <RunContext<
                            SupportDeps,
                        > as __p::ContextParam<'_>>::view(&mut __context),
                        __arg0,
                        __arg1,
                    )
                    .await
            };
            __p::finish::<__ToolReturns>(__result)
        })
    }
    impl __p::ToolDef for get_order_status {
        const TOOL: &'static dyn __p::Tool = &__TOOL;
    }
    __p::inventory::submit! {
        __p::ToolRegistration::new(& __TOOL)
    }
};
