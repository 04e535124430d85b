//! The router's evidence layer: an entity is kept only with evidence for it (its value written
//! in the user's text, or an alias a lookup knows), so a value a classifier invented never
//! reaches a tool.

use std::fmt;
use std::sync::Arc;

use regex::Regex;

/// Maps what the user called an entity (an alias, a nickname, a partial name) to its
/// canonical value.
///
/// A closure `Fn(&str, &str) -> Option<String>` is a lookup.
pub trait EntityLookup: Send + Sync + 'static {
    /// The canonical value `value` names, read in the user's `text`; `None` when it names
    /// nothing known, which is no evidence.
    fn resolve(&self, value: &str, text: &str) -> Option<String>;
}

impl<F> EntityLookup for F
where
    F: Fn(&str, &str) -> Option<String> + Send + Sync + 'static,
{
    fn resolve(&self, value: &str, text: &str) -> Option<String> {
        self(value, text)
    }
}

/// An entity the router looks for in requests, and the evidence it takes.
///
/// ```
/// use tool_runtime::routing::Entity;
///
/// let order = Entity::in_text("order_id", r"A-\d+")
///     .expect("the pattern compiles")
///     .ask("Which order? Its number starts with A-.");
/// assert_eq!(order.name(), "order_id");
/// assert_eq!(order.question(), "Which order? Its number starts with A-.");
/// ```
#[derive(Clone)]
pub struct Entity {
    name: String,
    evidence: Evidence,
    question: Option<String>,
}

#[derive(Clone)]
enum Evidence {
    /// The value matches the pattern as a whole and is written in the text.
    InText {
        /// The pattern, anchored at both ends: a value must be all of a match.
        whole: Regex,
        /// The pattern, to find a value in the text when none was given.
        find: Regex,
    },
    /// A lookup maps the value to its canonical one.
    Linked(Arc<dyn EntityLookup>),
}

impl fmt::Debug for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let evidence = match &self.evidence {
            Evidence::InText { find, .. } => format!("in_text({})", find.as_str()),
            Evidence::Linked(_) => "linked".to_owned(),
        };
        f.debug_struct("Entity")
            .field("name", &self.name)
            .field("evidence", &evidence)
            .field("question", &self.question)
            .finish()
    }
}

impl Entity {
    /// An entity of a strong format: a value holds when it matches `pattern` (all of it) and
    /// is written in the user's text. When neither a rule nor the classifier gave one, the
    /// value is the pattern's match in the text, if the text holds exactly one (two different
    /// ones are a question, not a guess).
    pub fn in_text(name: impl Into<String>, pattern: &str) -> Result<Self, regex::Error> {
        Ok(Self {
            name: name.into(),
            evidence: Evidence::InText {
                whole: Regex::new(&format!(r"\A(?:{pattern})\z"))?,
                find: Regex::new(pattern)?,
            },
            question: None,
        })
    }

    /// An entity known by a lookup: the value a rule or the classifier gave holds when
    /// `lookup` maps it to a canonical value, which the decision keeps.
    pub fn linked(name: impl Into<String>, lookup: impl EntityLookup) -> Self {
        Self {
            name: name.into(),
            evidence: Evidence::Linked(Arc::new(lookup)),
            question: None,
        }
    }

    /// The entity, with the question the user is asked when a request needs it and gives no
    /// evidence for it.
    #[must_use]
    pub fn ask(mut self, question: impl Into<String>) -> Self {
        self.question = Some(question.into());
        self
    }

    /// The entity's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The question the user is asked when the entity is missing: the one given to
    /// [`ask`](Self::ask), or `Which <name>? Please write it as it appears, so I can check
    /// it.` (the name with its `_` as spaces).
    pub fn question(&self) -> String {
        self.question
            .clone()
            .unwrap_or_else(|| default_question(&self.name))
    }

    /// The entity's value with its evidence: `given` (what a rule or the classifier said)
    /// checked against the user's `text`, or found in it.
    pub(crate) fn verify(&self, given: Option<&str>, text: &str) -> Option<String> {
        let given = given.map(str::trim).filter(|value| !value.is_empty());
        match (&self.evidence, given) {
            (Evidence::InText { whole, .. }, Some(value)) => {
                (whole.is_match(value) && text.contains(value)).then(|| value.to_owned())
            }
            (Evidence::InText { find, .. }, None) => {
                let mut found = find.find_iter(text).map(|found| found.as_str());
                let first = found.next().filter(|first| !first.is_empty())?;
                found.all(|other| other == first).then(|| first.to_owned())
            }
            (Evidence::Linked(lookup), Some(value)) => lookup.resolve(value, text),
            (Evidence::Linked(_), None) => None,
        }
    }
}

/// The question for an entity named `name` that was declared without one (or not declared).
pub(crate) fn default_question(name: &str) -> String {
    format!(
        "Which {}? Please write it as it appears, so I can check it.",
        name.replace('_', " ")
    )
}
