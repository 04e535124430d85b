//! Doc comments as text: the tool's description comes from them.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of the literal `#[doc = "..."]` attributes (what `///` comments become), one
/// line each, with the single leading space of `/// ` removed. `None` when there is none.
pub(crate) fn text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(name_value) if name_value.path.is_ident("doc") => {
                match &name_value.value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(text),
                        ..
                    }) => Some(text.value()),
                    _ => None,
                }
            }
            _ => None,
        })
        .flat_map(|chunk| {
            // `///` alone is an empty line: keep it, it separates paragraphs.
            let chunk = if chunk.is_empty() {
                "\n".to_owned()
            } else {
                chunk
            };
            chunk
                .lines()
                .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn joins_lines_and_keeps_paragraphs() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Look up one order."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = "   Indented stays indented."]),
            parse_quote!(#[allow(unused)]),
        ];
        assert_eq!(
            text(&attrs).as_deref(),
            Some("Look up one order.\n\n  Indented stays indented.")
        );
        assert_eq!(text(&[parse_quote!(#[doc = "  "])]), None);
    }
}
