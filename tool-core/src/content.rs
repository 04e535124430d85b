//! Results that are more than text: images, audio and embedded resources, as content blocks.
//!
//! A tool that returns [`Contents`] answers with a list of [`Content`] blocks. The MCP server
//! sends them as MCP content blocks; every other caller reads the output's JSON, the blocks in
//! MCP's shape (`{"type": "image", "data": ..., "mimeType": ...}`).
//!
//! ```
//! use tool_core::{Content, Contents};
//!
//! let chart = Contents::from(vec![
//!     Content::text("revenue by month"),
//!     Content::image("iVBORw0KGgo=", "image/png"),
//! ]);
//! assert_eq!(chart.blocks().len(), 2);
//! ```

use serde::{Deserialize, Serialize};

/// One block of a result, in MCP's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The image's bytes, base64 (standard alphabet, padded).
        data: String,
        /// Its media type (`image/png`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound, base64-encoded.
    Audio {
        /// The sound's bytes, base64 (standard alphabet, padded).
        data: String,
        /// Its media type (`audio/wav`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource given whole, with its URI.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource block.
    pub fn resource(resource: EmbeddedResource) -> Self {
        Self::Resource { resource }
    }
}

/// A resource's contents, with its URI: text, or base64 bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Where the resource lives.
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text, for a text resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its bytes, base64, for a binary resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl EmbeddedResource {
    /// A text resource.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: Some(text.into()),
            blob: None,
        }
    }

    /// A binary resource from base64 data.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        blob: impl Into<String>,
    ) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: None,
            blob: Some(blob.into()),
        }
    }
}

/// A result of content blocks: what a tool returns to answer with images, audio or
/// resources. Its output's JSON is the list of blocks, and the output is marked as blocks
/// ([`ToolOutput::content_blocks`](crate::ToolOutput::content_blocks)).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(transparent)]
pub struct Contents(Vec<Content>);

/// The name `Contents` serializes under, which the output's serializer recognises; any other
/// serializer writes the list as it is.
pub(crate) const CONTENTS_MARKER: &str = "$tool_core::Contents";

impl Serialize for Contents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(CONTENTS_MARKER, &self.0)
    }
}

impl Contents {
    /// No blocks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same result with one more block.
    #[must_use]
    pub fn with(mut self, block: Content) -> Self {
        self.0.push(block);
        self
    }

    /// The blocks, in order.
    pub fn blocks(&self) -> &[Content] {
        &self.0
    }

    /// The blocks, consuming the result.
    pub fn into_blocks(self) -> Vec<Content> {
        self.0
    }
}

impl From<Vec<Content>> for Contents {
    fn from(blocks: Vec<Content>) -> Self {
        Self(blocks)
    }
}

impl FromIterator<Content> for Contents {
    fn from_iter<I: IntoIterator<Item = Content>>(blocks: I) -> Self {
        Self(blocks.into_iter().collect())
    }
}
