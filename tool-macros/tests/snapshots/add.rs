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
    #[derive(
        ::tool_runtime::__private::serde::Deserialize,
        ::tool_runtime::__private::schemars::JsonSchema
    )]
    #[serde(
        crate = "::tool_runtime::__private::serde",
        deny_unknown_fields,
        bound(deserialize = "__T0: ::tool_runtime::__private::ParamDeserialize")
    )]
    #[schemars(
        crate = "::tool_runtime::__private::schemars",
        bound = "__T0: ::tool_runtime::__private::ParamSchema"
    )]
    struct __ToolArgs<__T0> {
        cursor: __T0,
    }
    fn __tool_parse<__T0: ::tool_runtime::__private::ParamDeserialize>(
        __args: ::tool_runtime::__private::ToolArgs<'_>,
    ) -> ::tool_runtime::__private::Result<
        __ToolArgs<__T0>,
        ::tool_runtime::__private::ToolError,
    > {
        ::tool_runtime::__private::parse_args(__args)
    }
    fn __tool_schema<__T0: ::tool_runtime::__private::ParamSchema>() -> ::tool_runtime::__private::serde_json::Value {
        ::tool_runtime::__private::input_schema_for::<__ToolArgs<__T0>>()
    }
    struct __ToolReturns;
    impl ::tool_runtime::__private::Returns for __ToolReturns {
        type Ok = Page<u32>;
        type Err = ::tool_runtime::__private::Infallible;
    }
    impl ::tool_runtime::__private::PageReturns for __ToolReturns {}
    fn __tool_spec() -> &'static ::tool_runtime::__private::ToolSpec {
        static __TOOL_SPEC: ::tool_runtime::__private::OnceLock<
            ::tool_runtime::__private::ToolSpec,
        > = ::tool_runtime::__private::OnceLock::new();
        __TOOL_SPEC
            .get_or_init(|| {
                #[allow(unused_imports)]
                use ::tool_runtime::__private::{
                    HasOutputSchema as _, NoOutputSchema as _,
                };
                ::tool_runtime::__private::ToolSpec::new(
                        "add-numbers",
                        "Adds.",
                        __tool_schema::<Option<String>>(),
                    )
                    .with_output_schema(
                        (&::tool_runtime::__private::OutputSchemaProbe::<
                            <__ToolReturns as ::tool_runtime::__private::Returns>::Ok,
                        >::new())
                            .output_schema(),
                    )
                    .with_execution(::tool_runtime::__private::ToolExecution {
                        read_only: false,
                        mutates_workspace: false,
                        exclusive: false,
                        stateful_action: true,
                        pagination: true,
                    })
                    .with_hints(::tool_runtime::__private::ToolHints {
                        idempotent: false,
                        destructive: false,
                        open_world: false,
                    })
                    .with_risk(::tool_runtime::__private::RiskLevel::Write)
                    .with_location(::tool_runtime::__private::SourceLocation {
                        file: ::core::file!(),
                        line: ::core::line!(),
                    })
            })
    }
    impl ::tool_runtime::__private::Tool for add {
        fn spec(&self) -> &::tool_runtime::__private::ToolSpec {
            __tool_spec()
        }
        fn deps_type(
            &self,
        ) -> ::tool_runtime::__private::Option<::tool_runtime::__private::DepsType> {
            <Option<
                &mut RunContext,
            > as ::tool_runtime::__private::ContextParam<'_>>::deps_type()
        }
        fn takes_context(&self) -> bool {
            true
        }
        fn prepare(
            &self,
            __args: ::tool_runtime::__private::ToolArgs<'_>,
            __call: &::tool_runtime::__private::CallContext,
        ) -> ::tool_runtime::__private::Result<
            ::tool_runtime::__private::ToolFuture,
            ::tool_runtime::__private::ToolError,
        > {
            let __parsed = match __tool_parse::<Option<String>>(__args) {
                ::tool_runtime::__private::Result::Ok(__value) => __value,
                ::tool_runtime::__private::Result::Err(__error) => {
                    return ::tool_runtime::__private::Result::Err(__error);
                }
            };
            let __context = match <Option<
                &mut RunContext,
            > as ::tool_runtime::__private::ContextParam<'_>>::storage(__call.clone()) {
                ::tool_runtime::__private::Result::Ok(__value) => __value,
                ::tool_runtime::__private::Result::Err(__error) => {
                    return ::tool_runtime::__private::Result::Err(__error);
                }
            };
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
    }
    impl ::tool_runtime::__private::ToolDef for add {
        const TOOL: &'static dyn ::tool_runtime::__private::Tool = &add {};
    }
    ::tool_runtime::__private::inventory::submit! {
        ::tool_runtime::__private::ToolRegistration::new(< add as
        ::tool_runtime::__private::ToolDef > ::TOOL)
    }
};
