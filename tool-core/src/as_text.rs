//! A string result's text, taken without its JSON form.
//!
//! The model reads a string result as its text, so escaping it into JSON only to unquote it
//! again costs two passes over every byte for nothing. [`as_text`] serializes a value into a
//! serializer that accepts exactly one string: a `String`, `&str`, `Arc<str>`, `Cow<str>` or a
//! JSON string value gives its text (one copy); anything else is refused at its first call,
//! before any work, and is serialized as JSON instead.

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

/// The value's text, when it serializes as a single string.
#[inline]
pub(crate) fn as_text<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    value.serialize(TextOnly).ok()
}

/// The serializer that accepts one string.
struct TextOnly;

/// What [`TextOnly`] answers to anything but a string.
#[derive(Debug)]
struct NotText;

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a string")
    }
}

impl std::error::Error for NotText {}

impl ser::Error for NotText {
    #[inline]
    fn custom<T: fmt::Display>(_: T) -> Self {
        NotText
    }
}

type Refused = Result<String, NotText>;

impl ser::Serializer for TextOnly {
    type Ok = String;
    type Error = NotText;
    type SerializeSeq = Impossible<String, NotText>;
    type SerializeTuple = Impossible<String, NotText>;
    type SerializeTupleStruct = Impossible<String, NotText>;
    type SerializeTupleVariant = Impossible<String, NotText>;
    type SerializeMap = Impossible<String, NotText>;
    type SerializeStruct = Impossible<String, NotText>;
    type SerializeStructVariant = Impossible<String, NotText>;

    #[inline]
    fn serialize_str(self, text: &str) -> Refused {
        Ok(text.to_owned())
    }

    #[inline]
    fn serialize_bool(self, _: bool) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_i8(self, _: i8) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_i16(self, _: i16) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_i32(self, _: i32) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_i64(self, _: i64) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_u8(self, _: u8) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_u16(self, _: u16) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_u32(self, _: u32) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_u64(self, _: u64) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_f32(self, _: f32) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_f64(self, _: f64) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_char(self, _: char) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_bytes(self, _: &[u8]) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_none(self) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_unit(self) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_unit_struct(self, _: &'static str) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Refused {
        Err(NotText)
    }

    #[inline]
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotText> {
        Err(NotText)
    }

    #[inline]
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotText> {
        Err(NotText)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::sync::Arc;

    use serde_json::json;

    use super::as_text;

    #[test]
    fn strings_give_their_text_and_nothing_else_does() {
        let text = "line one\n\"quoted\" é";
        assert_eq!(as_text(text).as_deref(), Some(text));
        assert_eq!(as_text(&text.to_owned()).as_deref(), Some(text));
        assert_eq!(as_text(&Arc::<str>::from(text)).as_deref(), Some(text));
        assert_eq!(as_text(&Cow::Borrowed(text)).as_deref(), Some(text));
        assert_eq!(as_text(&json!(text)).as_deref(), Some(text));
        assert_eq!(as_text(&json!({ "text": text })), None);
        assert_eq!(as_text(&json!([text])), None);
        assert_eq!(as_text(&Some(text)), None);
        assert_eq!(as_text(&'c'), None);
        assert_eq!(as_text(&1), None);
        assert_eq!(as_text(&()), None);
    }
}
