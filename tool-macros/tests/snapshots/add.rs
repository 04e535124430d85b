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
    const _: () = ::tool_runtime::__private::assert_param::<Option<String>>();
    const _: () = ::tool_runtime::__private::assert_context::<RunContext>();
    const _: () = ::tool_runtime::__private::assert_return::<Page<u32>>();
    const _: () = ::tool_runtime::__private::assert_page::<Page<u32>>();
    #[derive(
        ::tool_runtime::__private::serde::Deserialize,
        ::tool_runtime::__private::schemars::JsonSchema
    )]
    #[serde(crate = "::tool_runtime::__private::serde", deny_unknown_fields)]
    #[schemars(crate = "::tool_runtime::__private::schemars")]
    struct __ToolArgs {
        cursor: Option<String>,
    }
    fn __tool_spec() -> &'static ::tool_runtime::__private::ToolSpec {
        static SPEC: ::tool_runtime::__private::OnceLock<
            ::tool_runtime::__private::ToolSpec,
        > = ::tool_runtime::__private::OnceLock::new();
        SPEC.get_or_init(|| {
            #[allow(unused_imports)]
            use ::tool_runtime::__private::{HasOutputSchema as _, NoOutputSchema as _};
            ::tool_runtime::__private::ToolSpec::new(
                    "add-numbers",
                    "Adds.",
                    ::tool_runtime::__private::input_schema_for::<__ToolArgs>(),
                )
                .with_output_schema(
                    (&::tool_runtime::__private::OutputSchemaProbe::<Page<u32>>::new())
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
            <RunContext as ::tool_runtime::__private::FromCallContext>::deps_type()
        }
        fn takes_context(&self) -> bool {
            true
        }
        fn prepare(
            &self,
            args: ::tool_runtime::__private::ToolArgs<'_>,
            call: &::tool_runtime::__private::CallContext,
        ) -> ::tool_runtime::__private::Result<
            ::tool_runtime::__private::ToolFuture,
            ::tool_runtime::__private::ToolError,
        > {
            let __parsed: __ToolArgs = match ::tool_runtime::__private::parse_args(
                args,
            ) {
                ::tool_runtime::__private::Result::Ok(parsed) => parsed,
                ::tool_runtime::__private::Result::Err(error) => {
                    return ::tool_runtime::__private::Result::Err(error);
                }
            };
            let __context: RunContext = match <RunContext as ::tool_runtime::__private::FromCallContext>::from_call_context(
                call.clone(),
            ) {
                ::tool_runtime::__private::Result::Ok(context) => context,
                ::tool_runtime::__private::Result::Err(error) => {
                    return ::tool_runtime::__private::Result::Err(error);
                }
            };
            ::tool_runtime::__private::box_future(async move {
                let __ToolArgs { cursor } = __parsed;
                let mut __context = __context;
                let __result = add(
                    cursor,
                    ::tool_runtime::__private::Option::Some(&mut __context),
                );
                ::tool_runtime::__private::finish_page(
                    ::tool_runtime::__private::Plain(__result),
                )
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
