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
    const _: () = ::tool_core::__private::assert_param::<String>();
    const _: () = ::tool_core::__private::assert_param::<bool>();
    const _: () = ::tool_core::__private::assert_context::<RunContext<SupportDeps>>();
    const _: () = ::tool_core::__private::assert_return::<
        <Result<OrderStatus, ToolError> as ::tool_core::__private::ResultParts>::Ok,
    >();
    const _: () = ::tool_core::__private::assert_error::<
        <Result<OrderStatus, ToolError> as ::tool_core::__private::ResultParts>::Err,
    >();
    #[derive(
        ::tool_core::__private::serde::Deserialize,
        ::tool_core::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::tool_core::__private::serde", deny_unknown_fields)]
    #[schemars(crate = "::tool_core::__private::schemars")]
    struct __ToolArgs {
        /// Order id.
        order_id: String,
        /// Include the items.
        #[serde(default = "__tool_default_include_items")]
        include_items: bool,
    }
    fn __tool_default_include_items() -> bool {
        false
    }
    fn __tool_spec() -> &'static ::tool_core::__private::ToolSpec {
        static SPEC: ::tool_core::__private::OnceLock<
            ::tool_core::__private::ToolSpec,
        > = ::tool_core::__private::OnceLock::new();
        SPEC.get_or_init(|| {
            #[allow(unused_imports)]
            use ::tool_core::__private::{HasOutputSchema as _, NoOutputSchema as _};
            ::tool_core::__private::ToolSpec::new(
                    "get_order_status",
                    "Look up one order.",
                    ::tool_core::__private::input_schema_for::<__ToolArgs>(),
                )
                .with_output_schema(
                    (&::tool_core::__private::OutputSchemaProbe::<
                        <Result<
                            OrderStatus,
                            ToolError,
                        > as ::tool_core::__private::IntoToolResult>::Ok,
                    >::new())
                        .output_schema(),
                )
                .with_execution(::tool_core::__private::ToolExecution {
                    read_only: true,
                    mutates_workspace: false,
                    exclusive: false,
                    stateful_action: false,
                    pagination: false,
                })
                .with_hints(::tool_core::__private::ToolHints {
                    idempotent: true,
                    destructive: false,
                    open_world: false,
                })
                .with_risk(::tool_core::__private::RiskLevel::Read)
                .with_timeout(
                    ::tool_core::__private::Option::Some(
                        ::tool_core::__private::Duration::from_millis(5000u64),
                    ),
                )
                .with_location(::tool_core::__private::SourceLocation {
                    file: ::core::file!(),
                    line: ::core::line!(),
                })
        })
    }
    impl ::tool_core::__private::Tool for get_order_status {
        fn spec(&self) -> &::tool_core::__private::ToolSpec {
            __tool_spec()
        }
        fn deps_type(
            &self,
        ) -> ::tool_core::__private::Option<::tool_core::__private::DepsType> {
            <RunContext<
                SupportDeps,
            > as ::tool_core::__private::FromCallContext>::deps_type()
        }
        fn takes_context(&self) -> bool {
            true
        }
        fn prepare(
            &self,
            args: ::tool_core::__private::ToolArgs<'_>,
            call: &::tool_core::__private::CallContext,
        ) -> ::tool_core::__private::Result<
            ::tool_core::__private::ToolFuture,
            ::tool_core::__private::ToolError,
        > {
            let __parsed: __ToolArgs = match ::tool_core::__private::parse_args(args) {
                ::tool_core::__private::Result::Ok(parsed) => parsed,
                ::tool_core::__private::Result::Err(error) => {
                    return ::tool_core::__private::Result::Err(error);
                }
            };
            let __context: RunContext<SupportDeps> = match <RunContext<
                SupportDeps,
            > as ::tool_core::__private::FromCallContext>::from_call_context(
                call.clone(),
            ) {
                ::tool_core::__private::Result::Ok(context) => context,
                ::tool_core::__private::Result::Err(error) => {
                    return ::tool_core::__private::Result::Err(error);
                }
            };
            ::tool_core::__private::box_future(async move {
                let __ToolArgs { order_id, include_items } = __parsed;
                let __context = __context;
                let __result = get_order_status(__context, order_id, include_items)
                    .await;
                ::tool_core::__private::finish(__result)
            })
        }
    }
    impl ::tool_core::__private::ToolDef for get_order_status {
        const TOOL: &'static dyn ::tool_core::__private::Tool = &get_order_status {};
    }
    ::tool_core::__private::inventory::submit! {
        ::tool_core::__private::ToolRegistration::new(< get_order_status as
        ::tool_core::__private::ToolDef > ::TOOL)
    }
};
