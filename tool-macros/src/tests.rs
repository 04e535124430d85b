//! The macro as a library: `quote!` input in, errors counted and expansions snapshotted.
//!
//! Snapshots are pretty-printed with prettyplease and checked with expect-test; after an
//! intended change, regenerate them with `UPDATE_EXPECT=1 cargo test -p tool-macros` and read
//! the diff.

use expect_test::{expect, expect_file};
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    crate::expand::tool(args, input, quote!(::tool_core))
}

fn pretty(tokens: TokenStream) -> String {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(error) => panic!("expansion does not parse: {error}\n{tokens}"),
    }
}

/// The messages of the `compile_error!`s in an expansion.
fn errors(tokens: TokenStream) -> Vec<String> {
    fn walk(tokens: TokenStream, found: &mut Vec<String>) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (index, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Ident(ident) if ident == "compile_error" => {
                    if let Some(TokenTree::Group(group)) = tokens.get(index + 2) {
                        let literal = group.stream().to_string();
                        let message: String = syn::parse_str::<syn::LitStr>(&literal)
                            .map(|literal| literal.value())
                            .unwrap_or(literal);
                        found.push(message);
                    }
                }
                TokenTree::Group(group) => walk(group.stream(), found),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(tokens, &mut found);
    found
}

#[test]
fn expansion_of_a_typical_tool() {
    let output = expand(
        quote!(read_only, timeout = "5s"),
        quote! {
            /// Look up one order.
            pub async fn get_order_status(
                ctx: RunContext<SupportDeps>,
                /// Order id.
                order_id: String,
                /// Include the items.
                #[default = false]
                include_items: bool,
            ) -> Result<OrderStatus, ToolError> {
                todo!()
            }
        },
    );
    expect_file!["../tests/snapshots/get_order_status.rs"].assert_eq(&pretty(output));
}

#[test]
fn expansion_of_a_sync_tool_with_a_borrowed_optional_context() {
    let output = expand(
        quote!(crate = ::tool_runtime, name = "add-numbers", pagination),
        quote! {
            /// Adds.
            fn add(cursor: Option<String>, ctx: Option<&mut RunContext>) -> Page<u32> {
                todo!()
            }
        },
    );
    expect_file!["../tests/snapshots/add.rs"].assert_eq(&pretty(output));
}

#[test]
fn every_mistake_in_one_attribute_is_reported_at_once() {
    let output = expand(
        quote!(raed_only, read_only, destructive, timeout = "soon"),
        quote! {
            fn wipe<T>(ctx: u32, first: RunContext, second: RunContext) {}
        },
    );
    expect![[r#"
        [
            "unknown key `raed_only` in #[tool]; did you mean `read_only`?\nvalid keys: name, title, description, version, read_only, mutates_workspace, exclusive, stateful, pagination, idempotent, idempotency, destructive, open_world, risk, resources, roles, timeout, blocking, max_output_chars, example, crate",
            "the parameter name `ctx` is kept for the context, but `u32` is not a `RunContext`; rename the parameter, or mark it `#[ctx]` if its type is an alias of `RunContext<D>`",
            "a #[tool] function cannot be generic: its JSON Schema must be known when the tool is registered; write one concrete #[tool] per type, or take a `serde_json::Value`",
            "a #[tool] takes at most one context, but `second` is a second one (the first is `first`); read everything from one `RunContext<D>`",
            "`read_only` contradicts `destructive`: a read-only tool destroys nothing; remove one of them",
            "a sync tool runs inline on the turn's task, where a timeout cannot interrupt it; make it `async fn`, or add `blocking` to run it on tokio's blocking pool",
            "a #[tool] needs a description: the model chooses tools by it; add a doc comment (`/// What it does and when to use it.`) or `description = \"...\"`",
            "invalid timeout `soon`: write a positive whole number followed by a unit, such as \"500ms\", \"15s\", \"2m\" or \"1h\"",
        ]
    "#]]
    .assert_debug_eq(&errors(output));
}

#[test]
fn on_error_the_function_is_still_emitted_without_our_attributes() {
    let output = expand(
        quote!(unknown_key),
        quote! {
            /// Reads.
            fn read(#[ctx] #[allow(unused)] context: Ctx, /// Doc.
            #[default = 3] limit: u32) -> u32 { limit }
        },
    );
    let text = pretty(output);
    assert!(
        text.contains("fn read(#[allow(unused)] context: Ctx, limit: u32) -> u32"),
        "{text}"
    );
    assert!(
        text.contains("impl ::tool_core::__private::ToolDef for read"),
        "{text}"
    );
    assert_eq!(errors(quote!()).len(), 0);
}

#[test]
fn a_method_gets_only_the_function_and_the_error() {
    let output = expand(
        quote!(read_only),
        quote! {
            /// Reads.
            fn read(&self) -> u32 { 1 }
        },
    );
    let text = pretty(output.clone());
    assert!(!text.contains("struct read"), "{text}");
    assert_eq!(errors(output).len(), 1);
}

#[test]
fn context_forms_are_classified() {
    for ty in [
        quote!(RunContext),
        quote!(RunContext<D>),
        quote!(&RunContext<D>),
        quote!(&mut RunContext<D>),
        quote!(std::sync::Arc<RunContext<D>>),
        quote!(Box<RunContext<D>>),
        quote!(tool_core::RunContext<D>),
        quote!(Option<RunContext<D>>),
        quote!(Option<&RunContext<D>>),
        quote!(Option<Arc<RunContext>>),
    ] {
        let output = expand(
            quote!(read_only),
            quote! {
                /// Reads.
                fn read(context: #ty, id: u32) -> u32 { id }
            },
        );
        let text = pretty(output.clone());
        assert_eq!(errors(output), Vec::<String>::new(), "{ty}");
        // The parameters struct has one field, instantiated with `u32`.
        assert!(
            text.contains("struct __ToolArgs<__T0> {\n        id: __T0,\n    }"),
            "{ty}: {text}"
        );
        assert!(text.contains("__tool_parse::<u32>(__args)"), "{ty}: {text}");
    }
    for ty in [
        quote!(Vec<RunContext>),
        quote!(Arc<Option<RunContext>>),
        quote!(&&RunContext),
        quote!(Option<Option<RunContext>>),
        quote!((RunContext, u32)),
        quote!(Rc<RunContext>),
    ] {
        let output = expand(
            quote!(read_only),
            quote! {
                /// Reads.
                fn read(context: #ty) -> u32 { 1 }
            },
        );
        assert_eq!(errors(output).len(), 1, "{ty}");
    }
}

#[test]
fn a_key_in_the_wrong_form_says_how_it_is_written() {
    let output = expand(
        quote!(
            timeout = 5,
            resources = "db:orders",
            roles = "billing",
            read_only = true,
            risk = "wirte",
            max_output_chars = "many",
            name = get_order
        ),
        quote! {
            /// Reads.
            async fn read() -> u32 { 1 }
        },
    );
    expect![[r#"
        [
            "`timeout` takes a string with a unit: write `timeout = \"5s\"`",
            "`resources` takes a list of strings, even of one: write `resources(\"db:orders\")`",
            "`roles` takes a list of strings, even of one: write `roles = [\"billing\"]`",
            "`read_only` is a flag and takes no value: write `read_only`",
            "`risk` takes \"read\", \"write\" or \"destructive\": write `risk = \"write\"`; did you mean `write`?",
            "`max_output_chars` takes a whole number: write `max_output_chars = 4000`",
            "`name` takes a string: write `name = \"get_order\"`",
        ]
    "#]]
    .assert_debug_eq(&errors(output));
}

#[test]
fn roles_are_declared_in_the_spec() {
    let output = expand(
        quote!(stateful, roles = ["billing", "org:admin"]),
        quote! {
            /// Refunds an order.
            async fn refund(order_id: String) -> String { order_id }
        },
    );
    assert_eq!(errors(output.clone()), Vec::<String>::new());
    let text = pretty(output);
    assert!(
        text.contains(r#"roles: &["billing", "org:admin"],"#),
        "{text}"
    );

    // The list form of `resources` is read the same way.
    let output = expand(
        quote!(stateful, roles("billing")),
        quote! {
            /// Refunds an order.
            async fn refund(order_id: String) -> String { order_id }
        },
    );
    assert_eq!(errors(output.clone()), Vec::<String>::new());
    assert!(pretty(output).contains(r#"roles: &["billing"],"#));

    // Without the key, nothing is written: the declaration keeps `ToolDecl::UNSET`'s none.
    let output = expand(
        quote!(stateful),
        quote! {
            /// Refunds an order.
            async fn refund(order_id: String) -> String { order_id }
        },
    );
    assert!(!pretty(output).contains("roles:"));
}

#[test]
fn roles_must_be_listed_portable_and_once() {
    let output = expand(
        quote!(stateful, roles = []),
        quote! {
            /// Refunds.
            async fn refund() {}
        },
    );
    expect![[r#"
        [
            "`roles` lists no role: a tool that every principal may call takes no `roles` key; remove it, or name the roles a principal needs, such as `roles = [\"billing\"]`",
        ]
    "#]]
    .assert_debug_eq(&errors(output));

    let output = expand(
        quote!(
            stateful,
            roles = ["billing", "", "team lead", "ünicode", "admin", "billing"]
        ),
        quote! {
            /// Refunds.
            async fn refund() {}
        },
    );
    expect![[r#"
        [
            "a role cannot be empty: a role is 1 to 64 characters, each an ASCII letter, digit, `_`, `-`, `.` or `:`, such as \"billing\" or \"org:admin\"",
            "the role `team lead` is not a portable identifier: ' ' is not allowed; a role is 1 to 64 characters, each an ASCII letter, digit, `_`, `-`, `.` or `:`, such as \"billing\" or \"org:admin\"",
            "the role `ünicode` is not a portable identifier: 'ü' is not allowed; a role is 1 to 64 characters, each an ASCII letter, digit, `_`, `-`, `.` or `:`, such as \"billing\" or \"org:admin\"",
            "the role `billing` is already listed: a principal needs every listed role, so each is listed once; remove this one",
        ]
    "#]]
    .assert_debug_eq(&errors(output));

    let long = "r".repeat(65);
    let output = expand(
        quote!(stateful, roles = [#long]),
        quote! {
            /// Refunds.
            async fn refund() {}
        },
    );
    expect![[r#"
        [
            "the role `rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr` has 65 characters; a role is 1 to 64 characters, each an ASCII letter, digit, `_`, `-`, `.` or `:`, such as \"billing\" or \"org:admin\"",
        ]
    "#]]
    .assert_debug_eq(&errors(output));
}

#[test]
fn idempotency_is_declared_in_the_spec_only_when_chosen() {
    for (choice, written) in [
        (
            quote!(idempotency = "on"),
            "idempotency: __p::Option::Some(true),",
        ),
        (
            quote!(idempotency = "off"),
            "idempotency: __p::Option::Some(false),",
        ),
    ] {
        let output = expand(
            quote!(stateful, #choice),
            quote! {
                /// Refunds an order.
                async fn refund(order_id: String) -> String { order_id }
            },
        );
        assert_eq!(errors(output.clone()), Vec::<String>::new());
        let text = pretty(output);
        assert!(text.contains(written), "{text}");
    }

    // A read may opt in (it starts a costly job), an `idempotent` tool too.
    for flags in [quote!(read_only), quote!(stateful, idempotent)] {
        let output = expand(
            quote!(#flags, idempotency = "on"),
            quote! {
                /// Starts a report.
                async fn start_report(month: String) -> String { month }
            },
        );
        assert_eq!(errors(output.clone()), Vec::<String>::new());
        assert!(pretty(output).contains("idempotency: __p::Option::Some(true),"));
    }

    // Without the key, nothing is written: the declaration keeps `ToolDecl::UNSET`'s none.
    let output = expand(
        quote!(stateful),
        quote! {
            /// Refunds an order.
            async fn refund(order_id: String) -> String { order_id }
        },
    );
    assert!(!pretty(output).contains("idempotency:"));
}

#[test]
fn idempotency_is_on_or_off_and_off_is_refused_on_a_read() {
    let output = expand(
        quote!(
            stateful,
            idempotency = "of",
            idempotency = "maybe",
            idempotency = "OFF",
            idempotency = true,
            idempotency = off,
            idempotency,
            idempotent = "off"
        ),
        quote! {
            /// Refunds.
            async fn refund() {}
        },
    );
    expect![[r#"
        [
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"off\"`; did you mean `off`?",
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"on\"` to use the idempotency layer, or `idempotency = \"off\"` not to",
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"off\"`",
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"on\"`",
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"off\"`",
            "`idempotency` takes \"on\" or \"off\": write `idempotency = \"on\"` to use the idempotency layer, or `idempotency = \"off\"` not to",
            "`idempotent` is a flag and takes no value: write `idempotent`, or, to choose whether the idempotency layer applies, `idempotency = \"off\"`",
        ]
    "#]]
    .assert_debug_eq(&errors(output));

    let output = expand(
        quote!(read_only, idempotency = "off"),
        quote! {
            /// Reads.
            async fn read() -> u32 { 1 }
        },
    );
    expect![[r#"
        [
            "`idempotency = \"off\"` is pointless on a `read_only` tool: reads never use the idempotency layer unless they opt in with `idempotency = \"on\"`; remove it",
        ]
    "#]]
    .assert_debug_eq(&errors(output));
}

/// The key table is the one source of the keys: each key's example parses, alone, without an
/// error, as that key.
#[test]
fn every_key_is_written_as_its_example_says() {
    for key in crate::attr::KEYS {
        let args: TokenStream = key
            .example
            .parse()
            .unwrap_or_else(|error| panic!("`{}`: {:?}: {error}", key.name, key.example));
        let mut errors = crate::errors::Errors::default();
        let attr = crate::attr::ToolAttr::parse(args, &mut errors);
        assert!(
            errors.finish().is_ok(),
            "`{}`: {:?} is rejected",
            key.name,
            key.example
        );
        assert!(
            attr.span_of(key.name).is_some(),
            "{:?} is not `{}`",
            key.example,
            key.name
        );
    }
}

#[test]
fn blocking_is_for_sync_functions_and_a_sync_timeout_needs_it() {
    let output = expand(
        quote!(read_only, blocking),
        quote! {
            /// Fetches.
            async fn fetch() -> u32 { 1 }
        },
    );
    expect![[r#"
        [
            "`blocking` is for a sync `fn`, whose whole body then runs on tokio's blocking pool; an `async fn` runs on the turn's task and must not block it: remove `blocking` and move the blocking part into `tokio::task::spawn_blocking`, or make the tool a plain `fn`",
        ]
    "#]]
    .assert_debug_eq(&errors(output));

    let output = expand(
        quote!(read_only, timeout = "5s"),
        quote! {
            /// Reads.
            fn read() -> u32 { 1 }
        },
    );
    expect![[r#"
        [
            "a sync tool runs inline on the turn's task, where a timeout cannot interrupt it; make it `async fn`, or add `blocking` to run it on tokio's blocking pool",
        ]
    "#]]
    .assert_debug_eq(&errors(output));

    for (args, input) in [
        (
            quote!(read_only, blocking, timeout = "5s"),
            quote!(
                fn read() -> u32 {
                    1
                }
            ),
        ),
        (
            quote!(read_only, timeout = "5s"),
            quote!(
                async fn read() -> u32 {
                    1
                }
            ),
        ),
    ] {
        let output = expand(args, quote!(#[doc = "Reads."] #input));
        assert_eq!(errors(output), Vec::<String>::new());
    }
}

/// A parameter named like the function, or like anything the expansion declares, cannot
/// change what the generated code calls: the function is called by its name alone, and the
/// arguments are bound to mixed-site names.
#[test]
fn the_function_is_called_by_its_name_with_hygienic_arguments() {
    let output = expand(
        quote!(read_only),
        quote! {
            /// Runs a query.
            async fn query(query: String, __arg0: u32) -> String { query }
        },
    );
    let text = pretty(output);
    assert!(
        text.contains("let __ToolArgs { query: __arg0, __arg0: __arg1 } = __parsed;"),
        "{text}"
    );
    assert!(text.contains("query(__arg0, __arg1).await"), "{text}");
}

/// The body is not parsed: it comes out token for token, and doc comments at its start still
/// describe the tool.
#[test]
fn the_body_comes_out_as_written_and_its_inner_docs_describe_the_tool() {
    let body = quote! {{
        //! Reads the number.
        let number = 1;
        number
    }};
    let output = expand(
        quote!(read_only),
        quote! {
            fn read() -> u32 #body
        },
    );
    assert_eq!(errors(output.clone()), Vec::<String>::new());
    let emitted = output.into_iter().find_map(|token| match token {
        TokenTree::Group(group) if group.delimiter() == proc_macro2::Delimiter::Brace => {
            Some(group.to_string())
        }
        _ => None,
    });
    assert_eq!(emitted, Some(body.to_string()));
    let described = crate::model::ToolFn::parse(
        crate::model::FnItem::parse(quote!(fn read() -> u32 #body)).expect("a function"),
        &mut crate::errors::Errors::default(),
    );
    assert_eq!(described.docs.as_deref(), Some("Reads the number."));
}

/// Parameters the macro reads itself (names, renames, aliases, defaults) are parsed by code in
/// `tool-core` shared by every tool; a derived `Deserialize` would be compiled per tool for
/// every deserializer it is called with (see `tests/compile_cost.md`).
#[test]
fn plain_parameters_are_parsed_without_a_derived_deserializer() {
    let text = pretty(expand(
        quote!(read_only),
        quote! {
            /// Reads.
            async fn read(
                /// The order.
                order_id: String,
                /// How many.
                #[default = 3]
                limit: u32,
                /// The query.
                #[serde(rename = "q", alias = "query")]
                query: Option<String>,
                /// Verbose.
                #[serde(default)]
                #[schemars(extend("x-verbose" = true))]
                verbose: bool,
            ) -> String {
                order_id
            }
        },
    ));
    assert!(
        !text.contains("serde::Deserialize"),
        "the parameters struct derives Deserialize:\n{text}"
    );
    assert!(
        !text.contains("parse_args"),
        "the parameters are parsed by the generic parse_args:\n{text}"
    );
    assert!(text.contains("parse_params"), "{text}");
}

/// A serde attribute whose meaning only serde knows (`flatten`, `with`, ...) keeps the derived
/// `Deserialize`, and the generic parse.
#[test]
fn other_serde_attributes_keep_the_derived_deserializer() {
    for attribute in [
        quote!(#[serde(flatten)]),
        quote!(#[serde(deserialize_with = "crate::read")]),
        quote!(#[serde(rename(deserialize = "q"))]),
        quote!(#[serde(skip)]),
    ] {
        let text = pretty(expand(
            quote!(read_only),
            quote! {
                /// Reads.
                async fn read(
                    /// The filter.
                    #attribute
                    filter: Filter,
                ) -> String {
                    String::new()
                }
            },
        ));
        assert!(text.contains("serde::Deserialize"), "{attribute}:\n{text}");
        assert!(text.contains("parse_args"), "{attribute}:\n{text}");
    }
}
