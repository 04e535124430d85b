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
    const _: () = ::tool_core::__private::assert_param::<bool>();
    #[derive(::tool_core::__private::schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[schemars(
        crate = "::tool_core::__private::schemars",
        bound = "__T0: ::tool_core::__private::ParamSchema"
    )]
    struct __ToolArgs<__T0> {
        /// Order id.
        order_id: __T0,
        /// Include the items.
        #[serde(default = "__tool_default_include_items")]
        include_items: bool,
    }
    struct __ToolSlots<__T0>(
        ::tool_core::__private::Option<__T0>,
        ::tool_core::__private::Option<bool>,
    );
    const __TOOL_PARAMS: ::tool_core::__private::ParamTable = ::tool_core::__private::ParamTable {
        keys: &["order_id", "include_items"],
        params: &[0usize, 1usize],
        names: &["order_id", "include_items"],
    };
    impl<
        __T0: ::tool_core::__private::ParamDeserialize,
    > ::tool_core::__private::ParamSlots for __ToolSlots<__T0> {
        fn set(
            &mut self,
            __index: usize,
            __input: ::tool_core::__private::FieldInput<'_>,
        ) -> ::tool_core::__private::Result<(), ::tool_core::__private::FieldError> {
            match __index {
                0 => ::tool_core::__private::read_param(&mut self.0, __input),
                1 => ::tool_core::__private::read_param(&mut self.1, __input),
                _ => ::tool_core::__private::Result::Ok(()),
            }
        }
        fn finish(
            &mut self,
        ) -> ::tool_core::__private::Result<
            (),
            ::tool_core::__private::serde_json::Error,
        > {
            if self.0.is_none() {
                self.0 = ::tool_core::__private::Option::Some(
                    ::tool_core::__private::missing_param("order_id")?,
                );
            }
            if self.1.is_none() {
                self.1 = ::tool_core::__private::Option::Some(
                    __tool_default_include_items(),
                );
            }
            ::tool_core::__private::Result::Ok(())
        }
        fn clear(&mut self) {
            self.0 = ::tool_core::__private::Option::None;
            self.1 = ::tool_core::__private::Option::None;
        }
    }
    fn __tool_parse<__T0: ::tool_core::__private::ParamDeserialize>(
        __args: ::tool_core::__private::ToolArgs<'_>,
    ) -> ::tool_core::__private::Result<
        __ToolArgs<__T0>,
        ::tool_core::__private::ToolError,
    > {
        let mut __slots = __ToolSlots::<
            __T0,
        >(::tool_core::__private::Option::None, ::tool_core::__private::Option::None);
        ::tool_core::__private::parse_params(__args, &__TOOL_PARAMS, &mut __slots)?;
        match __slots {
            __ToolSlots(
                ::tool_core::__private::Option::Some(__value0),
                ::tool_core::__private::Option::Some(__value1),
            ) => {
                ::tool_core::__private::Result::Ok(__ToolArgs {
                    order_id: __value0,
                    include_items: __value1,
                })
            }
            #[allow(unreachable_patterns)]
            _ => {
                ::tool_core::__private::Result::Err(
                    ::tool_core::__private::params_incomplete(),
                )
            }
        }
    }
    fn __tool_schema<__T0: ::tool_core::__private::ParamSchema>() -> ::tool_core::__private::serde_json::Value {
        ::tool_core::__private::input_schema_from(
            <__ToolArgs<
                __T0,
            > as ::tool_core::__private::schemars::JsonSchema>::schema_name,
            <__ToolArgs<
                __T0,
            > as ::tool_core::__private::schemars::JsonSchema>::json_schema,
        )
    }
    fn __tool_default_include_items() -> bool {
        false
    }
    struct __ToolReturns;
    impl ::tool_core::__private::Returns for __ToolReturns {
        type Ok = <Result<
            OrderStatus,
            ToolError,
        > as ::tool_core::__private::ResultParts>::Ok;
        type Err = <Result<
            OrderStatus,
            ToolError,
        > as ::tool_core::__private::ResultParts>::Err;
    }
    fn __tool_output_schema() -> ::tool_core::__private::Option<
        ::tool_core::__private::serde_json::Value,
    > {
        #[allow(unused_imports)]
        use ::tool_core::__private::{HasOutputSchema as _, NoOutputSchema as _};
        (&::tool_core::__private::OutputSchemaProbe::<
            <__ToolReturns as ::tool_core::__private::Returns>::Ok,
        >::new())
            .output_schema()
    }
    static __TOOL: ::tool_core::__private::FnTool = ::tool_core::__private::FnTool::new(
        ::tool_core::__private::ToolDecl {
            name: "get_order_status",
            description: "Look up one order.",
            execution: ::tool_core::__private::ToolExecution {
                read_only: true,
                mutates_workspace: false,
                exclusive: false,
                stateful_action: false,
                pagination: false,
            },
            hints: ::tool_core::__private::ToolHints {
                idempotent: true,
                destructive: false,
                open_world: false,
            },
            risk: ::tool_core::__private::RiskLevel::Read,
            timeout: ::tool_core::__private::Option::Some(
                ::tool_core::__private::Duration::from_millis(5000u64),
            ),
            location: ::tool_core::__private::SourceLocation {
                file: ::core::file!(),
                line: ::core::line!(),
            },
            ..::tool_core::__private::ToolDecl::UNSET
        },
        __tool_schema::<String>,
        __tool_output_schema,
        <RunContext<SupportDeps> as ::tool_core::__private::ContextParam<'_>>::deps_type,
        true,
        __tool_prepare,
    );
    fn __tool_prepare(
        __args: ::tool_core::__private::ToolArgs<'_>,
        __call: &::tool_core::__private::CallContext,
    ) -> ::tool_core::__private::Result<
        ::tool_core::__private::ToolFuture,
        ::tool_core::__private::ToolError,
    > {
        let __parsed = __tool_parse::<String>(__args)?;
        let __context = <RunContext<
            SupportDeps,
        > as ::tool_core::__private::ContextParam<'_>>::storage(__call.clone())?;
        ::tool_core::__private::box_future(async move {
            let __ToolArgs { order_id: __arg0, include_items: __arg1 } = __parsed;
            let __result = {
                let mut __context = __context;
                get_order_status(
                        <RunContext<
                            SupportDeps,
                        > as ::tool_core::__private::ContextParam<
                            '_,
                        >>::view(&mut __context),
                        __arg0,
                        __arg1,
                    )
                    .await
            };
            ::tool_core::__private::finish::<__ToolReturns>(__result)
        })
    }
    impl ::tool_core::__private::ToolDef for get_order_status {
        const TOOL: &'static dyn ::tool_core::__private::Tool = &__TOOL;
    }
    ::tool_core::__private::inventory::submit! {
        ::tool_core::__private::ToolRegistration::new(& __TOOL)
    }
};
