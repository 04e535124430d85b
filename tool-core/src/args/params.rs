//! Parsing the parameters a `#[tool]` declares, by code every tool shares.
//!
//! A derived `Deserialize` is compiled for each deserializer it is called with, and a tool's
//! arguments meet four (JSON text, a `Value`, and each again through `serde_path_to_error` to
//! name the field of an error): in a crate of many tools that is most of what the compiler
//! does for them. Here the object of the arguments is walked once, non-generically, for all
//! tools; a tool gives only its table of names ([`ParamTable`]) and its slots
//! ([`ParamSlots`]), which read each value with [`read_param`], generic over the parameter's
//! type alone (a crate's tools share a few types: `String`, `Option<u32>`, ...).
//!
//! The messages are serde's own, in serde's order: the walk asks serde for each of them
//! (`unknown_field`, `duplicate_field`, `missing_field`), at the moment serde's derived code
//! would, and a value is read by the parameter's own `Deserialize`. What follows a failure
//! (the field's path, integral floats read as integers) is the same code as for
//! [`parse_args`](super::parse_args).

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{
    Failure, Malformed, PathError, leading_non_object, malformed_error, not_an_object, text_failed,
    value_failed, value_kind,
};
use crate::error::ToolError;
use crate::tool::ToolArgs;

/// The name serde's messages give the parameters (`expected struct __ToolArgs`), as for the
/// struct a derived `Deserialize` would be on.
const STRUCT_NAME: &str = "__ToolArgs";

/// The names of a tool's parameters, as its arguments' keys.
#[derive(Debug)]
pub struct ParamTable {
    /// Every key a parameter answers to, in the order serde lists them in an unknown field's
    /// message: parameter by parameter, each one's name and aliases sorted.
    pub keys: &'static [&'static str],
    /// The parameter (its index among the slots) each of `keys` names.
    pub params: &'static [usize],
    /// Each parameter's name, as an error about it says it.
    pub names: &'static [&'static str],
    /// Whether JSON text writes every key as it is: none has a `"`, a `\` or a control
    /// character, which JSON escapes.
    pub plain: bool,
}

impl ParamTable {
    fn index_of(&self, key: &str) -> Option<usize> {
        let at = self.keys.iter().position(|name| *name == key)?;
        self.params.get(at).copied()
    }

    /// The parameter `key` names, `keys[*expected]` tried first (arguments mostly come in the
    /// order the parameters are declared); `expected` moves past the key found.
    #[inline]
    fn find(&self, key: &str, expected: &mut usize) -> Option<usize> {
        let at = match self.keys.get(*expected) {
            Some(name) if *name == key => *expected,
            _ => self.keys.iter().position(|name| *name == key)?,
        };
        *expected = at + 1;
        self.params.get(at).copied()
    }

    /// The key written at the start of `bytes` (after its opening quote) when it is
    /// `keys[at]`, as it mostly is (arguments come in the order the parameters are declared):
    /// the parameter, and the key's length.
    #[inline]
    fn key_at(&self, at: usize, bytes: &[u8]) -> Option<(usize, usize)> {
        let name = self.keys.get(at).filter(|_| self.plain)?.as_bytes();
        let after = bytes.get(name.len())?;
        if *after == b'"' && bytes.starts_with(name) {
            Some((*self.params.get(at)?, name.len()))
        } else {
            None
        }
    }
}

/// Where one parameter's value is read from.
#[derive(Debug, Clone, Copy)]
pub enum FieldInput<'a> {
    /// JSON text that starts with the value (after whitespace) and goes on: the value is
    /// read as far as it goes, and [`read_param`] says how far that is.
    Stream(&'a str),
    /// JSON text of the value alone.
    Text(&'a str),
    /// The same, the path of an error tracked.
    TrackedText(&'a str),
    /// JSON text of a value that may nest deeply: read as the one element of an array, so
    /// that serde_json's nesting limit counts the arguments' object too, as for a derived
    /// `Deserialize` (an error's position is then one column further on its first line).
    Nested(&'a str),
    /// The same, the path of an error tracked.
    TrackedNested(&'a str),
    /// A parsed value.
    Value(&'a Value),
    /// The same, the path of an error tracked.
    TrackedValue(&'a Value),
}

/// Why a parameter's value did not read.
#[derive(Debug)]
pub struct FieldError(Why);

#[derive(Debug)]
enum Why {
    /// From an untracked input.
    Plain(serde_json::Error),
    /// From a tracked input: where in the value.
    Tracked(PathError),
}

/// A tool's parameters while their values come in: one `Option` each, written by the macro.
pub trait ParamSlots {
    /// Reads the value of parameter `index` into its slot: as [`read_param`].
    fn set(&mut self, index: usize, input: FieldInput<'_>) -> Result<usize, FieldError>;

    /// Reads the value of parameter `index` from a parsed value: as [`read_value`], the
    /// usual way of a `Value`'s entries, kept apart from [`ParamSlots::set`] so that it stays
    /// as short as serde's derived code for a field.
    fn set_value(&mut self, index: usize, value: &Value) -> Result<(), FieldError>;

    /// Fills each slot no key set, in order: with its default ([`fill_with`]), or serde's
    /// answer for a missing field ([`fill_missing`]: `None` for an `Option`, an error
    /// otherwise).
    ///
    /// Another attempt at the same arguments (integral floats rewritten) sets the slots
    /// again, each key's over the last attempt's value: the slots are not emptied between.
    fn finish(&mut self) -> Result<(), serde_json::Error>;
}

/// Reads one parameter's value from a parsed value into its slot: what a slot's
/// [`ParamSlots::set_value`] does.
#[inline]
pub fn read_value<T: DeserializeOwned>(
    slot: &mut Option<T>,
    value: &Value,
) -> Result<(), FieldError> {
    match T::deserialize(value) {
        Ok(value) => {
            *slot = Some(value);
            Ok(())
        }
        Err(error) => Err(plain(error)),
    }
}

/// Fills a slot no key set with serde's answer for a missing field: what
/// [`ParamSlots::finish`] does for a parameter without a default.
pub fn fill_missing<T: DeserializeOwned>(
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), serde_json::Error> {
    if slot.is_none() {
        *slot = Some(missing_param(name)?);
    }
    Ok(())
}

/// Fills a slot no key set with its default.
pub fn fill_with<T>(slot: &mut Option<T>, default: fn() -> T) {
    if slot.is_none() {
        *slot = Some(default());
    }
}

/// Reads one parameter's value into its slot: what a slot's [`ParamSlots::set`] does. How
/// many bytes of a [`FieldInput::Stream`] the value took (0 for another input).
#[inline]
pub fn read_param<T: DeserializeOwned>(
    slot: &mut Option<T>,
    input: FieldInput<'_>,
) -> Result<usize, FieldError> {
    let value = match input {
        FieldInput::Stream(text) => {
            let mut stream = serde_json::Deserializer::from_str(text).into_iter::<T>();
            return match stream.next() {
                Some(Ok(value)) => {
                    *slot = Some(value);
                    Ok(stream.byte_offset())
                }
                Some(Err(error)) => Err(plain(error)),
                None => Err(plain(de::Error::custom("no value"))),
            };
        }
        FieldInput::Text(text) => serde_json::from_str(text).map_err(plain)?,
        FieldInput::Value(value) => T::deserialize(value).map_err(plain)?,
        FieldInput::TrackedText(text) => {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(&mut deserializer).map_err(tracked)?
        }
        FieldInput::TrackedValue(value) => {
            serde_path_to_error::deserialize(value).map_err(tracked)?
        }
        FieldInput::Nested(text) => read_nested(text, false)?,
        FieldInput::TrackedNested(text) => read_nested(text, true)?,
    };
    *slot = Some(value);
    Ok(0)
}

fn plain(error: serde_json::Error) -> FieldError {
    FieldError(Why::Plain(error))
}

fn tracked(error: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    FieldError(Why::Tracked(error.into()))
}

/// Reads `text` as the one element of an array (see [`FieldInput::Nested`]).
#[cold]
fn read_nested<T: DeserializeOwned>(text: &str, tracked: bool) -> Result<T, FieldError> {
    let wrapped = format!("[{text}]");
    let mut deserializer = serde_json::Deserializer::from_str(&wrapped);
    if !tracked {
        let Element(value) =
            <Element<T> as de::Deserialize>::deserialize(&mut deserializer).map_err(plain)?;
        return Ok(value);
    }
    match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(Element(value)) => Ok(value),
        Err(error) => {
            // The path starts at the array's element: drop that step.
            let path = error.path().iter().skip(1).cloned().collect();
            Err(FieldError(Why::Tracked(PathError::new(
                path,
                error.into_inner(),
            ))))
        }
    }
}

/// The one element of an array.
struct Element<T>(T);

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Element<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ElementVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: de::Deserialize<'de>> Visitor<'de> for ElementVisitor<T> {
            type Value = Element<T>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("one value")
            }
            fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Element<T>, S::Error> {
                match seq.next_element()? {
                    Some(value) => Ok(Element(value)),
                    None => Err(de::Error::invalid_length(0, &self)),
                }
            }
        }
        deserializer.deserialize_seq(ElementVisitor(std::marker::PhantomData))
    }
}

/// The value of a parameter no key gave, as serde's derived code has it: `None` for an
/// `Option` (any type that reads "no value" as one), `missing field` otherwise.
pub fn missing_param<T: DeserializeOwned>(name: &'static str) -> Result<T, serde_json::Error> {
    T::deserialize(Missing(name))
}

/// The deserializer serde hands a missing field's type.
struct Missing(&'static str);

impl<'de> Deserializer<'de> for Missing {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// The slots come back full, or this error says why not: a slot `finish` left empty, which
/// is a bug in the expansion.
pub fn params_incomplete() -> ToolError {
    ToolError::new(
        crate::error::ErrorKind::Internal,
        "a parameter was left without a value after parsing",
    )
}

/// Parses `args` into `slots`, with the errors and the integral-float reading of
/// [`parse_args`](super::parse_args).
pub fn parse_params(
    args: ToolArgs<'_>,
    table: &ParamTable,
    slots: &mut dyn ParamSlots,
) -> Result<(), ToolError> {
    match args {
        ToolArgs::Json(text) => {
            let text = if text.starts_with('{') {
                text
            } else {
                leading_non_object(text)?
            };
            if read_plainly(text, table, slots).is_some() {
                return Ok(());
            }
            match walk_text(text, table, slots) {
                Ok(()) => Ok(()),
                Err(Failure::Malformed(malformed)) => Err(malformed_error(&malformed)),
                Err(Failure::Field(error)) => {
                    text_failed(text, error, &mut |text| walk_text(text, table, slots))
                }
            }
        }
        ToolArgs::Value(Value::Null) | ToolArgs::Parsed(Value::Null) => {
            parse_params(ToolArgs::Json("{}"), table, slots)
        }
        ToolArgs::Value(value) => match walk_value(&value, table, slots) {
            Ok(()) => Ok(()),
            Err(Walked::NotAnObject) => Err(not_an_object(value_kind(&value))),
            Err(Walked::Failed(error)) => {
                value_failed(value, error, &mut |value| walk_again(value, table, slots))
            }
        },
        ToolArgs::Parsed(value) => match walk_value(value, table, slots) {
            Ok(()) => Ok(()),
            Err(Walked::NotAnObject) => Err(not_an_object(value_kind(value))),
            Err(Walked::Failed(error)) => value_failed(value.clone(), error, &mut |value| {
                walk_again(value, table, slots)
            }),
        },
    }
}

enum Walked {
    NotAnObject,
    Failed(PathError),
}

fn walk_value(value: &Value, table: &ParamTable, slots: &mut dyn ParamSlots) -> Result<(), Walked> {
    match value {
        Value::Object(object) => walk_object(object, table, slots).map_err(Walked::Failed),
        _ => Err(Walked::NotAnObject),
    }
}

/// A retry's walk: the value is still the object it was, its numbers rewritten.
fn walk_again(
    value: &Value,
    table: &ParamTable,
    slots: &mut dyn ParamSlots,
) -> Result<(), PathError> {
    match walk_value(value, table, slots) {
        Ok(()) => Ok(()),
        Err(Walked::Failed(error)) => Err(error),
        Err(Walked::NotAnObject) => Err(PathError::at_root(de::Error::invalid_type(
            de::Unexpected::Other(value_kind(value)),
            &STRUCT_NAME,
        ))),
    }
}

/// The entries of an object, in order, as serde's derived code meets them in a `Value`.
fn walk_object(
    object: &Map<String, Value>,
    table: &ParamTable,
    slots: &mut dyn ParamSlots,
) -> Result<(), PathError> {
    let mut expected = 0;
    // A map has each key once, but a parameter may have aliases.
    let aliased = table.keys.len() > table.names.len();
    let mut seen = Seen::new(if aliased { table.names.len() } else { 0 });
    for (key, value) in object {
        let Some(index) = table.find(key, &mut expected) else {
            return Err(unknown(key, table));
        };
        if aliased && seen.insert(index) {
            return Err(duplicate(index, table));
        }
        if let Err(error) = slots.set_value(index, value) {
            let tracked = slots.set(index, FieldInput::TrackedValue(value));
            return Err(field_failure(key, error, tracked));
        }
    }
    slots.finish().map_err(PathError::at_root)
}

/// The error of a parameter's value, with its path: the tracked reading's, or, should that
/// one not fail, the first error at the parameter.
fn field_failure(key: &str, error: FieldError, tracked: Result<usize, FieldError>) -> PathError {
    match (tracked, error.0) {
        (Err(FieldError(Why::Tracked(tracked))), _) | (_, Why::Tracked(tracked)) => {
            PathError::below(key, tracked)
        }
        (_, Why::Plain(error)) => PathError::new(
            vec![serde_path_to_error::Segment::Map {
                key: key.to_owned(),
            }],
            error,
        ),
    }
}

fn duplicate(index: usize, table: &ParamTable) -> PathError {
    let name = table.names.get(index).copied().unwrap_or_default();
    PathError::at_root(de::Error::duplicate_field(name))
}

fn unknown(key: &str, table: &ParamTable) -> PathError {
    PathError::new(
        vec![serde_path_to_error::Segment::Map {
            key: key.to_owned(),
        }],
        de::Error::unknown_field(key, table.keys),
    )
}

/// The arguments' object read in one pass, as long as it is written plainly (keys without
/// escapes) and right: each value is read by its parameter from the text where it starts.
/// `None` at anything else (an unknown key, a value that does not read, a syntax error,
/// nesting that may reach serde_json's limit): [`walk_text`] then reads it all again, with
/// serde_json's parse of the object, and says what serde's derived code would.
fn read_plainly(text: &str, table: &ParamTable, slots: &mut dyn ParamSlots) -> Option<()> {
    let bytes = text.as_bytes();
    // The object is one level of serde_json's 128. More than 64 parameters: too many to
    // mark in one word.
    if may_nest_deeply(text, 128) || table.names.len() > 64 {
        return None;
    }
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_whitespace(bytes, at + 1);
    let mut expected = 0;
    let mut seen = 0_u64;
    if bytes.get(at) != Some(&b'}') {
        loop {
            if bytes.get(at) != Some(&b'"') {
                return None;
            }
            let start = at + 1;
            let (index, length) = match table.key_at(expected, bytes.get(start..)?) {
                Some(found) => {
                    expected += 1;
                    found
                }
                None => {
                    let length = bytes
                        .get(start..)?
                        .iter()
                        .position(|byte| matches!(byte, b'"' | b'\\' | 0..=0x1f))?;
                    if bytes.get(start + length) != Some(&b'"') {
                        return None;
                    }
                    // Both ends are ASCII quotes: character boundaries.
                    let key = text.get(start..start + length)?;
                    let at = table.keys.iter().position(|name| *name == key)?;
                    expected = at + 1;
                    (*table.params.get(at)?, length)
                }
            };
            at = skip_whitespace(bytes, start + length + 1);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            let bit = 1_u64 << (index % 64);
            if seen & bit != 0 {
                return None;
            }
            seen |= bit;
            let rest = text.get(at + 1..)?;
            let read = slots.set(index, FieldInput::Stream(rest)).ok()?;
            at = skip_whitespace(bytes, at + 1 + read);
            match bytes.get(at) {
                Some(b',') => at = skip_whitespace(bytes, at + 1),
                Some(b'}') => break,
                _ => return None,
            }
        }
    }
    if skip_whitespace(bytes, at + 1) != bytes.len() {
        return None;
    }
    slots.finish().ok()
}

/// Past JSON whitespace from `at`.
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        at += 1;
    }
    at
}

/// Whether text may nest `levels` deep: it takes as many brackets, opened and closed.
fn may_nest_deeply(text: &str, levels: usize) -> bool {
    text.len() >= 2 * levels
        && text
            .bytes()
            .filter(|byte| matches!(byte, b'[' | b'{'))
            .count()
            >= levels
}

/// JSON text of the arguments, parsed whole: the object by serde_json, each value by its
/// parameter's type from the value's own text.
fn walk_text(text: &str, table: &ParamTable, slots: &mut dyn ParamSlots) -> Result<(), Failure> {
    let mut failure = None;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let visitor = TextVisitor {
        text,
        cursor: 0,
        table,
        slots,
        failure: &mut failure,
    };
    let parsed = (&mut deserializer)
        .deserialize_struct(STRUCT_NAME, table.keys, visitor)
        .and_then(|()| deserializer.end());
    match parsed {
        Ok(()) => Ok(()),
        Err(error) => Err(failure.unwrap_or_else(|| Failure::of(error))),
    }
}

/// The object of JSON text, key by key. A failure it finds itself is kept in `failure`, with
/// its path (serde_json is handed an error only to stop).
struct TextVisitor<'w, 'de> {
    text: &'de str,
    /// Where the entry after the last value read starts (at its comma), in `text`.
    cursor: usize,
    table: &'w ParamTable,
    slots: &'w mut dyn ParamSlots,
    failure: &'w mut Option<Failure>,
}

impl<'de> TextVisitor<'_, 'de> {
    /// Where `part`, a slice of the text, starts in it.
    fn offset(&self, part: &str) -> usize {
        (part.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize)
    }

    /// The failure of a value serde_json's skim refused: the parameter's own reading of it,
    /// which says what serde's derived code would (the skim words some errors its own way: a
    /// trailing comma is "expected value" to it), or `None` to keep the skim's error when it is
    /// not in the value (a missing colon) or the reading accepts the value.
    fn skim_failure(&mut self, key: &str, index: usize) -> Option<Failure> {
        let start = value_start(self.text, self.cursor)?;
        let value = self.text.get(start..)?;
        let (input, lead) = text_input(value, true);
        match self.slots.set(index, input) {
            Err(FieldError(Why::Tracked(error)))
                if error.inner().is_syntax() || error.inner().is_eof() =>
            {
                Some(Failure::Malformed(Malformed::within(
                    error.inner(),
                    self.text,
                    start,
                    lead,
                )))
            }
            Err(FieldError(Why::Tracked(error))) => {
                Some(Failure::Field(PathError::below(key, error)))
            }
            Err(FieldError(Why::Plain(_))) | Ok(_) => None,
        }
    }

    fn fail<E: de::Error>(&mut self, failure: Failure) -> E {
        *self.failure = Some(failure);
        E::custom("the arguments do not match the parameters")
    }

    /// The failure of reading `raw`, the text of parameter `index`'s value.
    fn value_failure(
        &mut self,
        key: &str,
        index: usize,
        raw: &'de str,
        error: FieldError,
    ) -> Failure {
        match error.0 {
            // Only what the object's parse did not see: a number beyond its type's range,
            // a lone surrogate, nesting too deep.
            Why::Plain(error) if error.is_syntax() || error.is_eof() => {
                let (_, lead) = text_input(raw, false);
                Failure::Malformed(Malformed::within(&error, self.text, self.offset(raw), lead))
            }
            why => {
                let (input, _) = text_input(raw, true);
                let tracked = self.slots.set(index, input);
                Failure::Field(field_failure(key, FieldError(why), tracked))
            }
        }
    }
}

/// How a value's text is read ([`FieldInput::Text`], or [`FieldInput::Nested`] when it may
/// nest as deep as serde_json's limit), and how many characters that puts before it.
fn text_input(text: &str, tracked: bool) -> (FieldInput<'_>, usize) {
    // serde_json allows 128 levels, the arguments' object one of them.
    match (may_nest_deeply(text, 127), tracked) {
        (false, false) => (FieldInput::Text(text), 0),
        (false, true) => (FieldInput::TrackedText(text), 0),
        (true, false) => (FieldInput::Nested(text), 1),
        (true, true) => (FieldInput::TrackedNested(text), 1),
    }
}

impl<'de> Visitor<'de> for TextVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "struct {STRUCT_NAME}")
    }

    fn visit_map<M: MapAccess<'de>>(mut self, mut map: M) -> Result<(), M::Error> {
        self.cursor = self.text.find('{').unwrap_or_default();
        let mut seen = Seen::new(self.table.names.len());
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let key = key.0;
            let Some(index) = self.table.index_of(&key) else {
                return Err(self.fail(Failure::Field(unknown(&key, self.table))));
            };
            if seen.insert(index) {
                return Err(self.fail(Failure::Field(duplicate(index, self.table))));
            }
            let raw = match map.next_value::<&'de RawValue>() {
                Ok(raw) => raw.get(),
                Err(error) => match self.skim_failure(&key, index) {
                    Some(failure) => return Err(self.fail(failure)),
                    None => return Err(error),
                },
            };
            self.cursor = self.offset(raw) + raw.len();
            if let Err(error) = self.slots.set(index, text_input(raw, false).0) {
                let failure = self.value_failure(&key, index, raw, error);
                return Err(self.fail(failure));
            }
        }
        if let Err(error) = self.slots.finish() {
            return Err(self.fail(Failure::Field(PathError::at_root(error))));
        }
        Ok(())
    }
}

/// Where the value of the entry starting at `at` (its comma, or the object's brace) starts:
/// past the comma, the key and the colon. `None` when the entry is not written that way as
/// far as the value: the error is then before it.
fn value_start(text: &str, mut at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if matches!(bytes.get(at), Some(b'{' | b',')) {
        at += 1;
    }
    at = skip_whitespace(bytes, at);
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    at += 1;
    loop {
        match bytes.get(at)? {
            b'\\' => at += 2,
            b'"' => break,
            _ => at += 1,
        }
    }
    at = skip_whitespace(bytes, at + 1);
    if bytes.get(at) != Some(&b':') {
        return None;
    }
    at = skip_whitespace(bytes, at + 1);
    (at < bytes.len()).then_some(at)
}

/// A key as serde_json gives it: borrowed from the text unless it has escapes.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("field identifier")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(key.into()))
    }

    fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(key.to_owned().into()))
    }
}

/// The parameters a key has set so far.
enum Seen {
    Few(u64),
    Many(Vec<bool>),
}

impl Seen {
    #[inline]
    fn new(count: usize) -> Self {
        if count <= 64 {
            Seen::Few(0)
        } else {
            Seen::Many(vec![false; count])
        }
    }

    /// Marks `index`; whether it was marked already.
    fn insert(&mut self, index: usize) -> bool {
        match self {
            Seen::Few(bits) => {
                let bit = 1_u64 << (index % 64);
                let seen = *bits & bit != 0;
                *bits |= bit;
                seen
            }
            Seen::Many(seen) => match seen.get_mut(index) {
                Some(slot) => std::mem::replace(slot, true),
                None => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::args::parse_args;

    /// What `#[tool]` parameters may be, as serde derives them (named as the macro names
    /// its struct, which serde's messages name).
    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(non_camel_case_types)]
    struct __ToolArgs {
        order_id: String,
        limit: Option<u32>,
        filter: Option<Filter>,
        sizes: Vec<u8>,
        #[serde(rename = "q", alias = "query", alias = "a_query")]
        text: Option<String>,
        #[serde(default = "three")]
        retries: u8,
        #[serde(default)]
        verbose: bool,
        shape: Option<Shape>,
        ratio: Option<f64>,
        when: Option<i64>,
        meta: Option<Value>,
    }

    fn three() -> u8 {
        3
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Filter {
        status: String,
        after: Option<u64>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Shape {
        Rect { width: u32, height: i64 },
        Circle { radius: u16 },
    }

    /// The same parameters, as the macro writes them for `parse_params`.
    #[derive(Default)]
    struct Slots(
        Option<String>,
        Option<Option<u32>>,
        Option<Option<Filter>>,
        Option<Vec<u8>>,
        Option<Option<String>>,
        Option<u8>,
        Option<bool>,
        Option<Option<Shape>>,
        Option<Option<f64>>,
        Option<Option<i64>>,
        Option<Option<Value>>,
    );

    static TABLE: ParamTable = ParamTable {
        keys: &[
            "order_id", "limit", "filter", "sizes", "a_query", "q", "query", "retries", "verbose",
            "shape", "ratio", "when", "meta",
        ],
        params: &[0, 1, 2, 3, 4, 4, 4, 5, 6, 7, 8, 9, 10],
        names: &[
            "order_id", "limit", "filter", "sizes", "q", "retries", "verbose", "shape", "ratio",
            "when", "meta",
        ],
        plain: true,
    };

    impl ParamSlots for Slots {
        fn set(&mut self, index: usize, input: FieldInput<'_>) -> Result<usize, FieldError> {
            match index {
                0 => read_param(&mut self.0, input),
                1 => read_param(&mut self.1, input),
                2 => read_param(&mut self.2, input),
                3 => read_param(&mut self.3, input),
                4 => read_param(&mut self.4, input),
                5 => read_param(&mut self.5, input),
                6 => read_param(&mut self.6, input),
                7 => read_param(&mut self.7, input),
                8 => read_param(&mut self.8, input),
                9 => read_param(&mut self.9, input),
                10 => read_param(&mut self.10, input),
                _ => Ok(0),
            }
        }

        fn set_value(&mut self, index: usize, value: &Value) -> Result<(), FieldError> {
            self.set(index, FieldInput::Value(value)).map(|_| ())
        }

        fn finish(&mut self) -> Result<(), serde_json::Error> {
            fill_missing(&mut self.0, "order_id")?;
            fill_missing(&mut self.1, "limit")?;
            fill_missing(&mut self.2, "filter")?;
            fill_missing(&mut self.3, "sizes")?;
            fill_missing(&mut self.4, "q")?;
            fill_with(&mut self.5, three);
            fill_with(&mut self.6, Default::default);
            fill_missing(&mut self.7, "shape")?;
            fill_missing(&mut self.8, "ratio")?;
            fill_missing(&mut self.9, "when")?;
            fill_missing(&mut self.10, "meta")?;
            Ok(())
        }
    }

    fn walked(args: ToolArgs<'_>) -> Result<__ToolArgs, ToolError> {
        let mut slots = Slots::default();
        parse_params(args, &TABLE, &mut slots)?;
        match slots {
            Slots(
                Some(order_id),
                Some(limit),
                Some(filter),
                Some(sizes),
                Some(text),
                Some(retries),
                Some(verbose),
                Some(shape),
                Some(ratio),
                Some(when),
                Some(meta),
            ) => Ok(__ToolArgs {
                order_id,
                limit,
                filter,
                sizes,
                text,
                retries,
                verbose,
                shape,
                ratio,
                when,
                meta,
            }),
            _ => Err(params_incomplete()),
        }
    }

    /// Everything the model is told: the kind, message, hint and details.
    fn told(result: Result<__ToolArgs, ToolError>) -> Result<__ToolArgs, String> {
        result.map_err(|error| {
            format!(
                "{} | {} | {:?} | {:?}",
                error.kind().as_str(),
                error.message(),
                error.hint(),
                error.details()
            )
        })
    }

    const TEXTS: &[&str] = &[
        r#"{"order_id": "A-1", "sizes": []}"#,
        r#"{"order_id": "A-1", "sizes": [1, 2], "limit": 5, "q": "x", "verbose": true}"#,
        r#"{"sizes": [], "order_id": "A-1", "query": "via an alias", "retries": 1}"#,
        r#"{"sizes": [], "order_id": "A-\u0031", "a_query": null, "filter": {"status": "open"}}"#,
        r#"{"order\u005fid": "escaped key", "sizes": []}"#,
        "\t{ \"order_id\" :\r\n\"A-1\" ,\"sizes\":[ 1 ] , \"limit\":7 }\n ",
        r#"{"order_id":"é \" ☃","sizes":[],"limit":null,"ratio":2.5e-3,"when":-7}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1 }x"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1x}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1:}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1 "q": "a"}"#,
        r#"{"order_id": "A-1", "sizes": [], , "limit": 1}"#,
        r#"{"order_id": "A-1", "sizes": [], "meta": {"a": [1, {"b": null}]}}"#,
        r#"{"order_id": "A-1", "sizes": [], "shape": {"type": "rect", "width": 2, "height": -1}}"#,
        "",
        "   ",
        "null",
        "{}",
        "[]",
        "[\"A-1\", null]",
        "\"text\"",
        "12",
        "true",
        "null x",
        "nul",
        "{\"order_id\": \"A-1\"",
        "{\"order_id\": \"A-1\", \"sizes\": []} x",
        "{\"order_id\": \"A-1\", \"sizes\": [],}",
        "{\"order_id\": \"A-1\" \"sizes\": []}",
        "{\"order_id\" \"A-1\"}",
        "{order_id: 1}",
        "{\"order_id\": \"A-1\", \"sizes\": [1,]}",
        "{\"order_id\": \"A-1\", \"sizes\": [], \"limit\": }",
        "{\n  \"order_id\": \"A-1\",\n  \"sizes\": [],\n  \"ratio\": 1e400\n}",
        "{\"order_id\": \"A-1\", \"sizes\": [], \"ratio\": -1e400}",
        "{\"order_id\": \"A-1\", \"sizes\": [], \"q\": \"\\ud800\"}",
        "{\"order_id\": \"A-1\", \"sizes\": [], \"q\": \"tab\there\"}",
        "{\"order_id\": \"A-1\",\n \"filter\": {\"status\": \"\\udc00x\"}, \"sizes\": []}",
        r#"{"order_id": 5, "sizes": []}"#,
        r#"{"order_id": "A-1", "sizes": "none"}"#,
        r#"{"order_id": "A-1", "sizes": [1, 300]}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": "ten"}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": -1}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status": 5}}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {}}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status": "a", "state": 1}}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status": "a", "status": "b"}}"#,
        r#"{"order_id": "A-1", "sizes": [], "shape": {"type": "hexagon"}}"#,
        r#"{"order_id": "A-1", "sizes": [], "shape": {"width": 1}}"#,
        r#"{"order_id": "A-1", "sizes": [], "orderid": "x"}"#,
        r#"{"orderid": "x"}"#,
        r#"{"order_id": "A-1"}"#,
        r#"{"sizes": []}"#,
        r#"{"order_id": "A-1", "order_id": "A-2", "sizes": []}"#,
        r#"{"order_id": "A-1", "q": "a", "query": "b", "sizes": []}"#,
        r#"{"order_id": "A-1", "sizes": [], "order_id": }"#,
        r#"{"order_id": "A-1", "sizes": [], "bogus" 1}"#,
        r#"{"order_id": "A-1", "sizes": [1.0, 2e0, 3], "limit": 2.0, "ratio": 1.0}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1.5}"#,
        r#"{"order_id": "A-1", "sizes": [1.0, 2.5]}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": -1.0}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1e300}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1e-400}"#,
        r#"{"order_id": "A-1", "sizes": [], "when": -9223372036854775809}"#,
        r#"{"order_id": "A-1", "sizes": [], "when": -0.0, "retries": 2.0}"#,
        r#"{"order_id": "A-1", "sizes": [], "when": 12345678901234567.0}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status": "a", "after": 2.0}}"#,
        r#"{"order_id": "A-1", "sizes": [], "shape": {"type": "rect", "width": 3.0, "height": -4.0}}"#,
        r#"{"order_id": "A-1", "sizes": [], "shape": {"type": "circle", "radius": 1e5}}"#,
        r#"{"order_id": "A-1", "sizes": [2.0], "limit": 1.0, "limit": 2}"#,
        r#"{"order_id": "A-1", "sizes": [2.0], "extra": 1.0}"#,
        r#"{"order_id": "A-1", "sizes": [2.0], "q": 2.0}"#,
        r#"{"order_id": "A-1", "sizes": [2.0], "q": }"#,
        r#"{"order_id": "A-1", "sizes": [2.0]} x"#,
        r#"{"order_id": 1.0, "sizes": [2.0]}"#,
        r#"{"limit": 2.0}"#,
        r#"{"order_id": "A-1", "sizes": [], "retries": 256.0}"#,
        // Malformed inside a value: the typed reading's words, not the skim's.
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status": "a",}}"#,
        r#"{"order_id": "A-1", "sizes": [1 2]}"#,
        r#"{"order_id": "A-1", "sizes": [01]}"#,
        r#"{"order_id": "A-1", "sizes": [], "filter": {"status" "a"}}"#,
        r#"{"order_id": "A-1", "sizes": [], "q": "abc"#,
        r#"{"order_id": "A-1", "sizes": [1, "a",]}"#,
        r#"{"order_id": "A-1", "sizes": [1.0,]}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 01}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": 1.}"#,
        r#"{"order_id": "A-1", "sizes": [], "limit": -}"#,
        r#"{"order_id": "A-1", "sizes": [], "q": tru}"#,
        r#"{"order_id": "A-1", "sizes": [], "q": nul}"#,
        r#"{"order_id": "A-1", "sizes": [], "q": }"#,
        r#"{"order_id": "A-1", "sizes": [], "q":"#,
        r#"{"order_id": "A-1", "sizes": [], "q""#,
        r#"{"order_id": "A-1", "sizes":[],"filter":{"status":"a","after":[}}"#,
        "{\"order_id\": \"A-1\",\n\"sizes\": [\n1,\n]}",
        "{\"o\\\"d\": 1, \"sizes\": [1,]}",
        "{\"order_id\": \"A-1\", \"q\\u0000\": [1,]}",
        "{\"order_id\": \"A-1\", \"sizes\": [], \"q\": \"a\u{1}b\"}",
    ];

    #[test]
    fn text_gives_what_the_derived_deserializer_gives() {
        for text in TEXTS {
            assert_eq!(
                told(walked(ToolArgs::Json(text))),
                told(parse_args::<__ToolArgs>(ToolArgs::Json(text))),
                "{text}"
            );
        }
        // serde_json's nesting limit counts the arguments' object, as it does in serde's
        // derived code.
        for depth in [120, 126, 127, 128, 200] {
            for (open, close) in [("[", "]"), ("{\"a\": [", "]}")] {
                for (at, tail) in [("meta", ""), ("meta", "]"), ("meta", ","), ("sizes", "")] {
                    let deep = format!(
                        "{{\"order_id\": \"A-1\", \"sizes\": [],\n \"{at}\": {}1{}{tail}}}",
                        open.repeat(depth),
                        close.repeat(depth)
                    )
                    .replacen("\"sizes\": [],", "", usize::from(at == "sizes"));
                    assert_eq!(
                        told(walked(ToolArgs::Json(&deep))),
                        told(parse_args::<__ToolArgs>(ToolArgs::Json(&deep))),
                        "{depth} {open} {at} {tail}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_value_gives_what_the_derived_deserializer_gives() {
        let mut values: Vec<Value> = TEXTS
            .iter()
            .filter_map(|text| serde_json::from_str(text).ok())
            .collect();
        values.extend([
            json!({"order_id": "A-1", "sizes": [], "limit": 1e300}),
            json!({"order_id": "A-1", "sizes": [], "when": 1e17}),
            json!({"order_id": "A-1", "sizes": [], "limit": 2.5}),
            json!(null),
            json!([1]),
            json!("x"),
        ]);
        for value in values {
            assert_eq!(
                told(walked(ToolArgs::Parsed(&value))),
                told(parse_args::<__ToolArgs>(ToolArgs::Parsed(&value))),
                "{value}"
            );
            assert_eq!(
                told(walked(ToolArgs::Value(value.clone()))),
                told(parse_args::<__ToolArgs>(ToolArgs::Value(value.clone()))),
                "{value}"
            );
        }
    }

    /// The inputs the slots were handed, by kind.
    #[derive(Default)]
    struct Counting(Slots, Vec<&'static str>);

    impl ParamSlots for Counting {
        fn set(&mut self, index: usize, input: FieldInput<'_>) -> Result<usize, FieldError> {
            self.1.push(match input {
                FieldInput::Stream(_) => "stream",
                FieldInput::Text(_) | FieldInput::Nested(_) => "text",
                FieldInput::TrackedText(_) | FieldInput::TrackedNested(_) => "tracked text",
                FieldInput::Value(_) => "value",
                FieldInput::TrackedValue(_) => "tracked value",
            });
            self.0.set(index, input)
        }
        fn set_value(&mut self, index: usize, value: &Value) -> Result<(), FieldError> {
            self.1.push("value");
            self.0.set_value(index, value)
        }
        fn finish(&mut self) -> Result<(), serde_json::Error> {
            self.0.finish()
        }
    }

    fn inputs(text: &str) -> Vec<&'static str> {
        let mut slots = Counting::default();
        let _ = parse_params(ToolArgs::Json(text), &TABLE, &mut slots);
        slots.1
    }

    #[test]
    fn plain_text_is_read_in_one_pass_and_anything_else_again_by_serde_json() {
        assert_eq!(
            inputs(r#" { "order_id" : "A-1", "sizes": [1], "q": "x" } "#),
            ["stream"; 3]
        );
        // An escaped key: the one pass stops there, serde_json's parse reads it all.
        assert_eq!(
            inputs(r#"{"sizes": [], "order\u005fid": "A-1"}"#),
            ["stream", "text", "text"]
        );
        // A value that does not read: read again, tracked, to say where.
        assert_eq!(
            inputs(r#"{"order_id": "A-1", "sizes": ["x"]}"#),
            ["stream", "stream", "text", "text", "tracked text"]
        );
    }

    #[test]
    fn no_parameters_take_no_keys() {
        struct None_;
        impl ParamSlots for None_ {
            fn set(&mut self, _: usize, _: FieldInput<'_>) -> Result<usize, FieldError> {
                Ok(0)
            }
            fn set_value(&mut self, _: usize, _: &Value) -> Result<(), FieldError> {
                Ok(())
            }
            fn finish(&mut self) -> Result<(), serde_json::Error> {
                Ok(())
            }
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Empty {}
        static EMPTY: ParamTable = ParamTable {
            keys: &[],
            params: &[],
            names: &[],
            plain: true,
        };
        for text in ["{}", "", "null", r#"{"a": 1}"#, "{\"a\": }", "[]"] {
            let walked = parse_params(ToolArgs::Json(text), &EMPTY, &mut None_)
                .map_err(|error| error.message().to_owned());
            let derived = parse_args::<Empty>(ToolArgs::Json(text))
                .map(|_| ())
                .map_err(|error| error.message().to_owned());
            assert_eq!(walked, derived, "{text}");
        }
    }
}
