//! Scopes: which tools a request may see and call.
//!
//! A [`Scope`] is one value for both: the catalog handed to the model and the set of tools
//! the gates let run come from it, so what is shown is what is allowed. "All tools" and "no
//! tools" are distinct values, and an intent that cannot be established maps to the empty
//! scope (fail-closed).

use std::fmt;
use std::sync::Arc;

use tool_core::ToolList;

/// The tools a session may see and call.
///
/// Build it from a [`tools!`](crate::tools) list, which is checked at compile time: naming
/// something that is not a `#[tool]` does not compile.
///
/// ```
/// use tool_runtime::{Scope, tool, tools};
///
/// /// Looks an order up.
/// #[tool(read_only)]
/// async fn lookup_order(
///     /// The order id.
///     id: String,
/// ) -> String {
///     id
/// }
///
/// let orders = Scope::of(tools![lookup_order]);
/// assert!(orders.allows("lookup_order"));
/// assert!(!orders.allows("refund"));
/// assert!(!Scope::none().allows("lookup_order"));
/// assert!(Scope::all().allows("refund"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Scope {
    tools: Tools,
}

#[derive(Clone, PartialEq, Eq)]
enum Tools {
    All,
    /// Sorted, without repeats; empty for the empty scope.
    Only(Arc<[Box<str>]>),
}

impl Scope {
    /// Every tool of the runtime: no scoping. A session is created with this scope.
    pub fn all() -> Self {
        Self { tools: Tools::All }
    }

    /// No tool at all: the scope of a request whose intent is unknown.
    pub fn none() -> Self {
        Self::named(std::iter::empty::<&str>())
    }

    /// The tools of a [`tools!`](crate::tools) list.
    pub fn of(list: ToolList) -> Self {
        Self::named(list.iter().map(|tool| tool.spec().name()))
    }

    /// Tools by name, for tools built at run time ([`DynamicTool`](crate::dynamic::DynamicTool)).
    /// Names are not checked: a name no tool has allows nothing.
    pub fn named<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut names: Vec<Box<str>> = names.into_iter().map(|name| name.as_ref().into()).collect();
        names.sort_unstable();
        names.dedup();
        Self {
            tools: Tools::Only(names.into()),
        }
    }

    /// This scope and `other`'s tools together.
    #[must_use]
    pub fn union(&self, other: &Scope) -> Self {
        match (&self.tools, &other.tools) {
            (Tools::All, _) | (_, Tools::All) => Self::all(),
            (Tools::Only(mine), Tools::Only(theirs)) => {
                Self::named(mine.iter().chain(theirs.iter()))
            }
        }
    }

    /// The tools both this scope and `other` allow.
    #[must_use]
    pub fn intersection(&self, other: &Scope) -> Self {
        match (&self.tools, &other.tools) {
            (Tools::All, _) => other.clone(),
            (_, Tools::All) => self.clone(),
            (Tools::Only(mine), Tools::Only(_)) => {
                Self::named(mine.iter().filter(|name| other.allows(name)))
            }
        }
    }

    /// Whether the scope lets a session see and call `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        match &self.tools {
            Tools::All => true,
            Tools::Only(names) => names.binary_search_by(|name| (**name).cmp(tool)).is_ok(),
        }
    }

    /// Whether this is the scope of every tool.
    pub fn is_all(&self) -> bool {
        matches!(self.tools, Tools::All)
    }

    /// Whether this scope allows no tool.
    pub fn is_empty(&self) -> bool {
        matches!(&self.tools, Tools::Only(names) if names.is_empty())
    }
}

impl Default for Scope {
    /// [`Scope::all`].
    fn default() -> Self {
        Self::all()
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tools {
            Tools::All => f.write_str("Scope::all()"),
            Tools::Only(names) => f.debug_set().entries(names.iter()).finish(),
        }
    }
}

/// Declares the intents a request can have and the scope each one gets, in one place.
///
/// The macro defines an enum with one variant per intent, and:
/// - `Intent::scope(&self) -> Scope`: the intent's tools;
/// - `Intent::from_label(&str) -> Option<Intent>`: the intent named by its label (the
///   variant's name in `snake_case` as written after `=`);
/// - `Intent::scope_for(Option<&str>) -> Scope`: the scope of a label a classifier produced;
///   an unknown or missing label gets [`Scope::none`] (fail-closed).
///
/// Tools are named as in [`tools!`](crate::tools) and checked at compile time; an intent
/// declared twice does not compile.
///
/// ```
/// use tool_runtime::{Scope, intents, tool};
///
/// /// Looks an order up.
/// #[tool(read_only)]
/// async fn find_order(
///     /// The order id.
///     id: String,
/// ) -> String {
///     id
/// }
///
/// /// Opens a ticket.
/// #[tool(stateful)]
/// async fn file_ticket(
///     /// What is wrong.
///     summary: String,
/// ) -> String {
///     summary
/// }
///
/// intents! {
///     /// What a support request is about.
///     pub enum SupportIntent {
///         OrderStatus = "order_status" => [find_order],
///         Complaint = "complaint" => [find_order, file_ticket],
///     }
/// }
///
/// assert!(SupportIntent::Complaint.scope().allows("file_ticket"));
/// assert!(!SupportIntent::OrderStatus.scope().allows("file_ticket"));
/// assert_eq!(SupportIntent::from_label("complaint"), Some(SupportIntent::Complaint));
/// assert!(SupportIntent::scope_for(Some("weather")).is_empty());
/// assert!(SupportIntent::scope_for(None).is_empty());
/// ```
#[macro_export]
macro_rules! intents {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $label:literal => [ $($tool:path),* $(,)? ] ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        const _: () = ::core::assert!(
            $crate::__labels_unique(&[$($label),+]),
            "an intent label is declared twice"
        );

        impl $name {
            /// Every intent, in declaration order.
            #[allow(dead_code)]
            $vis const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The tools this intent may see and call.
            #[allow(dead_code)]
            $vis fn scope(&self) -> $crate::Scope {
                match self {
                    $( $name::$variant => $crate::Scope::of($crate::tools![$($tool),*]), )+
                }
            }

            /// The intent's label.
            #[allow(dead_code)]
            $vis fn label(&self) -> &'static str {
                match self {
                    $( $name::$variant => $label, )+
                }
            }

            /// The intent a label names, if any.
            #[allow(dead_code)]
            $vis fn from_label(label: &str) -> ::core::option::Option<Self> {
                match label {
                    $( $label => ::core::option::Option::Some($name::$variant), )+
                    _ => ::core::option::Option::None,
                }
            }

            /// The scope for a label a classifier produced: an unknown or missing label gets
            /// the empty scope.
            #[allow(dead_code)]
            $vis fn scope_for(label: ::core::option::Option<&str>) -> $crate::Scope {
                match label.and_then(Self::from_label) {
                    ::core::option::Option::Some(intent) => intent.scope(),
                    ::core::option::Option::None => $crate::Scope::none(),
                }
            }
        }

        impl $crate::routing::Intent for $name {
            fn all() -> &'static [Self] {
                $name::ALL
            }

            fn label(&self) -> &'static str {
                $name::label(self)
            }

            fn scope(&self) -> $crate::Scope {
                $name::scope(self)
            }
        }
    };
}

/// Whether no label repeats: `intents!` refuses a label declared twice at compile time.
#[doc(hidden)]
pub const fn __labels_unique(labels: &[&str]) -> bool {
    let mut i = 0;
    while i < labels.len() {
        let mut j = i + 1;
        while j < labels.len() {
            if same(labels[i].as_bytes(), labels[j].as_bytes()) {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
