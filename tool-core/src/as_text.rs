//! A tool's result, serialized once: a string's text, anything else's JSON.
//!
//! The model reads a string result as its text, so escaping it into JSON only to unquote it
//! again costs two passes over every byte for nothing. [`serialize`] hands the value to a
//! serializer that keeps the text of a value that is one string (`String`, `&str`,
//! `Arc<str>`, `Cow<str>`, a JSON string) and passes every other call on to serde_json, so the
//! value's `Serialize` runs once either way.

use std::cell::Cell;

use serde::Serialize;
use serde::ser::{
    self, SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant,
};
use serde_json::ser::{CompactFormatter, Compound};

/// A result, serialized.
pub(crate) enum Serialized {
    /// The value is one string: its text.
    Text(String),
    /// Anything else: its JSON.
    Json(String),
    /// [`Contents`](crate::Contents): the blocks' JSON.
    Blocks(String),
}

/// Serializes `value` once, as its text when it is one string, else as JSON.
#[inline]
pub(crate) fn serialize<T: Serialize + ?Sized>(value: &T) -> Result<Serialized, serde_json::Error> {
    let mut buffer = Vec::with_capacity(128);
    let mut json = serde_json::Serializer::new(&mut buffer);
    let blocks = Cell::new(false);
    let text = value.serialize(TextOrJson {
        json: &mut json,
        blocks: &blocks,
    })?;
    match text {
        Some(text) => Ok(Serialized::Text(text)),
        // serde_json writes UTF-8; the check costs far less than the writing.
        None => String::from_utf8(buffer)
            .map(if blocks.get() {
                Serialized::Blocks
            } else {
                Serialized::Json
            })
            .map_err(ser::Error::custom),
    }
}

type Json<'a> = &'a mut serde_json::Serializer<&'a mut Vec<u8>>;
type Part<'a> = Forward<Compound<'a, &'a mut Vec<u8>, CompactFormatter>>;

/// Keeps a top-level string's text (`Some`); writes anything else as JSON (`None`).
struct TextOrJson<'a> {
    json: Json<'a>,
    /// Set when the value is [`Contents`](crate::Contents) (a top-level one only: nested
    /// values are written by serde_json directly).
    blocks: &'a Cell<bool>,
}

/// A compound value (a sequence, map or struct) being written as JSON.
struct Forward<C>(C);

/// serde_json's answer, as this serializer's: the JSON is in the buffer.
fn written(result: Result<(), serde_json::Error>) -> Result<Option<String>, serde_json::Error> {
    result.map(|()| None)
}

macro_rules! forward {
    ($($method:ident($($argument:ident: $type:ty),*);)*) => {
        $(
            #[inline]
            fn $method(self, $($argument: $type),*) -> Result<Option<String>, serde_json::Error> {
                written(ser::Serializer::$method(self.json, $($argument),*))
            }
        )*
    };
}

/// The calls that start a compound value (a sequence, map or struct): serde_json writes it.
macro_rules! start_parts {
    ($($method:ident($($argument:ident: $type:ty),*);)*) => {
        $(
            #[inline]
            fn $method(self, $($argument: $type),*) -> Result<Part<'a>, serde_json::Error> {
                ser::Serializer::$method(self.json, $($argument),*).map(Forward)
            }
        )*
    };
}

impl<'a> ser::Serializer for TextOrJson<'a> {
    type Ok = Option<String>;
    type Error = serde_json::Error;
    type SerializeSeq = Part<'a>;
    type SerializeTuple = Part<'a>;
    type SerializeTupleStruct = Part<'a>;
    type SerializeTupleVariant = Part<'a>;
    type SerializeMap = Part<'a>;
    type SerializeStruct = Part<'a>;
    type SerializeStructVariant = Part<'a>;

    #[inline]
    fn serialize_str(self, text: &str) -> Result<Option<String>, serde_json::Error> {
        Ok(Some(text.to_owned()))
    }

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(
        self,
        value: &T,
    ) -> Result<Option<String>, serde_json::Error> {
        written(self.json.serialize_some(value))
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Option<String>, serde_json::Error> {
        if name == crate::content::CONTENTS_MARKER {
            self.blocks.set(true);
        }
        written(self.json.serialize_newtype_struct(name, value))
    }

    #[inline]
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Option<String>, serde_json::Error> {
        written(
            self.json
                .serialize_newtype_variant(name, index, variant, value),
        )
    }

    start_parts! {
        serialize_seq(len: Option<usize>);
        serialize_tuple(len: usize);
        serialize_tuple_struct(name: &'static str, len: usize);
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize);
        serialize_map(len: Option<usize>);
        serialize_struct(name: &'static str, len: usize);
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize);
    }
}

/// The compound parts whose items take one value each (`serialize_element` or
/// `serialize_field`), passed on to serde_json's.
macro_rules! forward_items {
    ($($part:ident => $method:ident),* $(,)?) => {
        $(
            impl<C: $part<Ok = (), Error = serde_json::Error>> $part for Forward<C> {
                type Ok = Option<String>;
                type Error = serde_json::Error;

                #[inline]
                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
                    self.0.$method(value)
                }

                #[inline]
                fn end(self) -> Result<Option<String>, Self::Error> {
                    written(self.0.end())
                }
            }
        )*
    };
}

forward_items! {
    SerializeSeq => serialize_element,
    SerializeTuple => serialize_element,
    SerializeTupleStruct => serialize_field,
    SerializeTupleVariant => serialize_field,
}

/// The compound parts whose fields are named, passed on to serde_json's.
macro_rules! forward_named_fields {
    ($($part:ident),* $(,)?) => {
        $(
            impl<C: $part<Ok = (), Error = serde_json::Error>> $part for Forward<C> {
                type Ok = Option<String>;
                type Error = serde_json::Error;

                #[inline]
                fn serialize_field<T: Serialize + ?Sized>(
                    &mut self,
                    key: &'static str,
                    value: &T,
                ) -> Result<(), Self::Error> {
                    self.0.serialize_field(key, value)
                }

                #[inline]
                fn skip_field(&mut self, key: &'static str) -> Result<(), Self::Error> {
                    self.0.skip_field(key)
                }

                #[inline]
                fn end(self) -> Result<Option<String>, Self::Error> {
                    written(self.0.end())
                }
            }
        )*
    };
}

forward_named_fields!(SerializeStruct, SerializeStructVariant);

impl<C: SerializeMap<Ok = (), Error = serde_json::Error>> SerializeMap for Forward<C> {
    type Ok = Option<String>;
    type Error = serde_json::Error;

    #[inline]
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Self::Error> {
        self.0.serialize_key(key)
    }

    #[inline]
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Self::Error> {
        self.0.serialize_value(value)
    }

    #[inline]
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), Self::Error> {
        self.0.serialize_entry(key, value)
    }

    #[inline]
    fn end(self) -> Result<Option<String>, Self::Error> {
        written(self.0.end())
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::cell::Cell;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde::{Serialize, Serializer};
    use serde_json::json;

    use super::{Serialized, serialize};

    fn text(value: &(impl Serialize + ?Sized)) -> Option<String> {
        match serialize(value) {
            Ok(Serialized::Text(text)) => Some(text),
            _ => None,
        }
    }

    fn json_of(value: &(impl Serialize + ?Sized)) -> Option<String> {
        match serialize(value) {
            Ok(Serialized::Json(json)) => Some(json),
            _ => None,
        }
    }

    #[test]
    fn strings_give_their_text() {
        let words = "line one\n\"quoted\" é";
        assert_eq!(text(words).as_deref(), Some(words));
        assert_eq!(text(&words.to_owned()).as_deref(), Some(words));
        assert_eq!(text(&Arc::<str>::from(words)).as_deref(), Some(words));
        assert_eq!(text(&Cow::Borrowed(words)).as_deref(), Some(words));
        assert_eq!(text(&json!(words)).as_deref(), Some(words));
    }

    #[test]
    fn everything_else_gives_the_json_serde_json_gives() {
        #[derive(Serialize)]
        enum Shape {
            Dot,
            Circle(f64),
            Pair(u8, u8),
            Rect { w: u32, h: u32 },
        }
        #[derive(Serialize)]
        struct Name(String);
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct Record {
            name: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            note: Option<String>,
            tags: Vec<String>,
            by_id: BTreeMap<u32, bool>,
        }
        let record = Record {
            name: "a".into(),
            note: None,
            tags: vec!["x".into()],
            by_id: [(1, true)].into(),
        };
        let values: Vec<Box<dyn erased::Erased>> = vec![
            Box::new(json!({ "text": "t", "n": [1, 2.5, null] })),
            Box::new(Some("text")),
            Box::new(Option::<u8>::None),
            Box::new('c'),
            Box::new(7_i128),
            Box::new(u64::MAX),
            Box::new(()),
            Box::new(Unit),
            Box::new(Name("n".into())),
            Box::new((1, "two")),
            Box::new(vec![Shape::Dot, Shape::Circle(1.5), Shape::Pair(1, 2)]),
            Box::new(Shape::Rect { w: 1, h: 2 }),
            Box::new(record),
        ];
        for value in values {
            let expected = value.to_json();
            assert_eq!(value.ours(), Some(expected));
        }
    }

    /// Serializes each value once, however it is taken apart.
    #[test]
    fn a_value_is_serialized_once() {
        struct Counted<'a>(&'a Cell<u32>);
        impl Serialize for Counted<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.0.set(self.0.get() + 1);
                json!({ "n": 1 }).serialize(serializer)
            }
        }
        let count = Cell::new(0);
        assert_eq!(json_of(&Counted(&count)).as_deref(), Some(r#"{"n":1}"#));
        assert_eq!(count.get(), 1);
    }

    /// Values of different types behind one trait, for the table above.
    mod erased {
        use serde::Serialize;

        pub(super) trait Erased {
            fn to_json(&self) -> String;
            fn ours(&self) -> Option<String>;
        }

        impl<T: Serialize> Erased for T {
            fn to_json(&self) -> String {
                serde_json::to_string(self).unwrap_or_default()
            }

            fn ours(&self) -> Option<String> {
                super::json_of(self)
            }
        }
    }
}
