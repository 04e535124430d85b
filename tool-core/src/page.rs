//! [`Page<T>`]: the result of a pagination tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One page of a larger result.
///
/// A `#[tool(pagination)]` function returns `Page<T>` (or `Result<Page<T>, E>`) and takes a
/// `cursor` parameter; the runtime tells the model how many items there are and which cursor
/// fetches the next page, so a cut-off list is never mistaken for the whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// The cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How many items there are in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

impl<T> Page<T> {
    /// The last page: `items` and nothing after them.
    pub fn last(items: Vec<T>) -> Self {
        Self {
            items,
            next_cursor: None,
            total: None,
        }
    }

    /// A page followed by the one `next_cursor` fetches (`None` on the last page).
    pub fn new(items: Vec<T>, next_cursor: Option<String>) -> Self {
        Self {
            items,
            next_cursor,
            total: None,
        }
    }

    /// Records the total number of items.
    #[must_use]
    pub fn with_total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// The page's metadata.
    pub fn info(&self) -> PageInfo {
        PageInfo {
            returned: self.items.len(),
            next_cursor: self.next_cursor.clone(),
            total: self.total,
        }
    }
}

/// What the runtime tells the model about a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct PageInfo {
    /// Items on this page.
    pub returned: usize,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// How many items there are in all, when known.
    pub total: Option<u64>,
}

/// A result type a pagination tool may return: [`Page<T>`].
#[diagnostic::on_unimplemented(
    message = "a `pagination` tool must return `Page<T>`, not `{Self}`",
    label = "this is not a `Page<T>`",
    note = "return `Page<T>` or `Result<Page<T>, E>`, or remove `pagination`"
)]
pub trait IsPage {
    /// The page's metadata.
    fn page_info(&self) -> PageInfo;
}

impl<T> IsPage for Page<T> {
    fn page_info(&self) -> PageInfo {
        self.info()
    }
}
