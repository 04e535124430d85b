//! Compositions merged into plain schemas, for the targets that accept only plain, closed
//! objects (OpenAI strict, Anthropic strict, Gemini `parameters`).
//!
//! The canonical form closes a composition where it is composed (`unevaluatedProperties:
//! false` beside `allOf`, a `$ref` with properties of its own, properties beside a union) and
//! leaves its parts open. Those targets know only `additionalProperties`, which sees only the
//! properties beside it: so each composition is merged into one schema first, then every
//! object is closed on its own.
//!
//! - `allOf`: its parts merged into the schema that holds it;
//! - a `$ref` with assertions beside it: the definition merged under them; with only
//!   annotations beside it, the definition inlined under them (OpenAI, Gemini) or left as it is
//!   (Anthropic keeps a `$ref`'s description); a reference to a definition being inlined
//!   (recursion) is wrapped as `anyOf: [{"$ref": ...}]` instead;
//! - a `$ref` with only `unevaluatedProperties: false` beside it: the bare `$ref` (every
//!   definition is closed on its own once its uses are all whole);
//! - assertions beside a union: merged into each alternative (an alternative that cannot
//!   hold beside them, such as a string next to `type: object`, is left out).
//!
//! Two parts that disagree on a keyword neither merge can settle are a
//! [`LoweringError`](crate::providers::LoweringError).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::Ctx;
use super::Failure;
use super::walk::{
    ORIGIN, Slot, children, children_mut, escape, is_annotation, is_hidden, origin, own_pointer,
    owner, reference, resolve, take_assertions,
};

/// What to do with a `$ref` that has only annotations beside it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum RefSiblings {
    /// Leave them (the target accepts a `$ref` with a description).
    Keep,
    /// Inline the definition under them.
    Inline,
}

/// Merges every composition in `schema` (see the module docs).
pub(super) fn flatten(
    ctx: &Ctx<'_>,
    schema: &mut Value,
    siblings: RefSiblings,
) -> Result<(), Failure> {
    let composer = Composer {
        snapshot: schema.clone(),
        ctx,
        siblings,
    };
    let mut stack = vec!["#".to_owned()];
    composer.flatten(schema, &mut stack, true)
}

struct Composer<'a> {
    /// The schema before flattening, where references are resolved.
    snapshot: Value,
    ctx: &'a Ctx<'a>,
    siblings: RefSiblings,
}

impl Composer<'_> {
    /// `stack`: the references whose definitions are being expanded here.
    fn flatten(
        &self,
        schema: &mut Value,
        stack: &mut Vec<String>,
        root: bool,
    ) -> Result<(), Failure> {
        let Value::Object(object) = schema else {
            return Ok(());
        };
        self.merge_reference(object, stack, root)?;
        self.merge_all_of(object, stack)?;
        self.distribute(object, stack)?;
        for (slot, child) in children_mut(object) {
            match &slot {
                Slot::Definition("$defs", name) if root => {
                    stack.push(format!("#/$defs/{}", escape(name)));
                    self.flatten(child, stack, false)?;
                    stack.pop();
                }
                _ => self.flatten(child, stack, false)?,
            }
        }
        Ok(())
    }

    /// `root`: the schema is the root, which must become one object whatever its `$ref`.
    fn merge_reference(
        &self,
        object: &mut Map<String, Value>,
        stack: &mut Vec<String>,
        root: bool,
    ) -> Result<(), Failure> {
        let Some(target) = reference(object).map(str::to_owned) else {
            return Ok(());
        };
        // Every definition is closed on its own once its uses are all whole.
        object.retain(|key, value| {
            !(matches!(
                key.as_str(),
                "additionalProperties" | "unevaluatedProperties"
            ) && *value == Value::Bool(false))
        });
        let siblings: Vec<&String> = object
            .keys()
            .filter(|key| !is_hidden(key) && *key != "$ref")
            .collect();
        if siblings.is_empty() && !root {
            return Ok(());
        }
        let annotations_only = siblings.iter().all(|key| is_annotation(key));
        if annotations_only && self.siblings == RefSiblings::Keep && !root {
            return Ok(());
        }
        if stack.contains(&target) {
            if annotations_only {
                let mut inner = Map::new();
                inner.insert("$ref".to_owned(), Value::String(target));
                if let Some(origin) = object.get(ORIGIN) {
                    inner.insert(ORIGIN.to_owned(), origin.clone());
                }
                object.shift_remove("$ref");
                object.insert("anyOf".to_owned(), Value::Array(vec![Value::Object(inner)]));
                return Ok(());
            }
            return Err(self.ctx.error(
                "$ref",
                origin(object, "$ref"),
                "refers back to a type that contains it, with constraints beside the reference",
                "move the constraints into the referenced type",
            ));
        }
        let definition = self.resolve_flat(&target, object, stack)?;
        let mut outer = std::mem::take(object);
        outer.shift_remove("$ref");
        *object = merge(outer.clone(), definition).map_err(|clash| {
            self.ctx.error(
                "$ref",
                origin(&outer, "$ref"),
                clash.problem("the referenced type and the keywords beside the `$ref`"),
                "state the constraint in one place",
            )
        })?;
        if reference(object).is_none() {
            return Ok(());
        }
        // The definition was itself a reference (an alias): follow it, this one on the stack.
        stack.push(target);
        let followed = self.merge_reference(object, stack, root);
        stack.pop();
        followed
    }

    fn merge_all_of(
        &self,
        object: &mut Map<String, Value>,
        stack: &mut Vec<String>,
    ) -> Result<(), Failure> {
        let pointer = origin(object, "allOf");
        let Some(Value::Array(parts)) = object.shift_remove("allOf") else {
            return Ok(());
        };
        let mut merged = std::mem::take(object);
        for part in parts {
            let part = self.part(part, stack)?;
            merged = merge(merged, part).map_err(|clash| {
                self.ctx.error(
                    "allOf",
                    pointer.clone(),
                    clash.problem("its parts"),
                    "state the constraint in one of the parts only",
                )
            })?;
        }
        *object = merged;
        // A part may have brought a `$ref` of its own.
        self.merge_reference(object, stack, false)
    }

    fn distribute(
        &self,
        object: &mut Map<String, Value>,
        stack: &mut Vec<String>,
    ) -> Result<(), Failure> {
        if object.contains_key("anyOf") && object.contains_key("oneOf") {
            // Both unions: each alternative of one beside each of the other.
            let pointer = origin(object, "oneOf");
            if let Some(one_of) = object.shift_remove("oneOf") {
                let mut part = Map::new();
                part.insert("oneOf".to_owned(), one_of);
                let whole = std::mem::take(object);
                *object = merge(whole, part).map_err(|clash| {
                    self.ctx.error(
                        "oneOf",
                        pointer,
                        clash.problem("`anyOf` and `oneOf`"),
                        "use one union",
                    )
                })?;
            }
        }
        let keyword = if object.contains_key("anyOf") {
            "anyOf"
        } else if object.contains_key("oneOf") {
            "oneOf"
        } else {
            return Ok(());
        };
        let has_own = object
            .keys()
            .any(|key| !is_annotation(key) && key != keyword);
        if !has_own {
            return Ok(());
        }
        let pointer = origin(object, keyword);
        let Some(Value::Array(alternatives)) = object.shift_remove(keyword) else {
            return Ok(());
        };
        let mut own = take_assertions(object);
        if let Some(origin) = object.get(ORIGIN) {
            own.insert(ORIGIN.to_owned(), origin.clone());
        }
        let mut kept = Vec::with_capacity(alternatives.len());
        for alternative in alternatives {
            let (alternative, through) = self.part_through(alternative, stack)?;
            match merge(own.clone(), alternative) {
                Ok(merged) => {
                    // The definition stays on the stack while its content is merged further:
                    // a union that contains itself would be distributed forever.
                    let mut merged = Value::Object(merged);
                    stack.extend(through.clone());
                    let flattened = self.flatten(&mut merged, stack, false);
                    if through.is_some() {
                        stack.pop();
                    }
                    flattened?;
                    kept.push(merged);
                }
                Err(Clash::Impossible(_)) => {}
                Err(clash) => {
                    return Err(self.ctx.error(
                        keyword,
                        pointer,
                        clash.problem("an alternative and the keywords beside the union"),
                        "state the constraint in each alternative",
                    ));
                }
            }
        }
        if kept.is_empty() {
            return Err(self.ctx.error(
                keyword,
                pointer,
                "has no alternative that can hold beside the keywords next to it",
                "check the union's alternatives against the type beside it",
            ));
        }
        object.insert(keyword.to_owned(), Value::Array(kept));
        Ok(())
    }

    /// A part of a composition, flattened, a bare `$ref` resolved.
    fn part(&self, part: Value, stack: &mut Vec<String>) -> Result<Map<String, Value>, Failure> {
        self.part_through(part, stack).map(|(part, _)| part)
    }

    /// [`Self::part`], and the reference it was resolved through, if any.
    fn part_through(
        &self,
        mut part: Value,
        stack: &mut Vec<String>,
    ) -> Result<(Map<String, Value>, Option<String>), Failure> {
        self.flatten(&mut part, stack, false)?;
        let Value::Object(part) = part else {
            return Ok((Map::new(), None));
        };
        match reference(&part).map(str::to_owned) {
            Some(target) => {
                if stack.contains(&target) {
                    return Err(self.ctx.error(
                        "$ref",
                        origin(&part, "$ref"),
                        "composes a type with itself (a recursive composition)",
                        "give the recursive part a field of its own",
                    ));
                }
                let mut definition = self.resolve_flat(&target, &part, stack)?;
                for (key, value) in part {
                    if key != "$ref" && !is_hidden(&key) {
                        definition.insert(key, value);
                    }
                }
                Ok((definition, Some(target)))
            }
            None => Ok((part, None)),
        }
    }

    /// The definition `target` names, flattened.
    fn resolve_flat(
        &self,
        target: &str,
        at: &Map<String, Value>,
        stack: &mut Vec<String>,
    ) -> Result<Map<String, Value>, Failure> {
        let Some(mut definition) = resolve(&self.snapshot, target) else {
            return Err(self.ctx.error(
                "$ref",
                origin(at, "$ref"),
                format!("names `{target}`, which is not a schema inside this one"),
                "use a local reference such as `#/$defs/Name`",
            ));
        };
        stack.push(target.to_owned());
        let flattened = self.flatten(&mut definition, stack, false);
        stack.pop();
        flattened?;
        match definition {
            Value::Object(definition) => Ok(definition),
            _ => Err(self.ctx.error(
                "$ref",
                origin(at, "$ref"),
                format!("names `{target}`, which is not a schema"),
                "point the reference at a schema",
            )),
        }
    }
}

/// Why two schemas cannot be merged into one.
#[derive(Debug, PartialEq)]
pub(super) enum Clash {
    /// Nothing can satisfy both (different types, disjoint enums).
    Impossible(String),
    /// Both could hold, but no single keyword says so.
    Conflict(String),
}

impl Clash {
    fn problem(&self, between: &str) -> String {
        match self {
            Clash::Impossible(keyword) => {
                format!("cannot be satisfied: {between} disagree on `{keyword}`")
            }
            Clash::Conflict(keyword) => {
                format!("cannot be merged into one schema: {between} both set `{keyword}`")
            }
        }
    }
}

/// One schema holding what `outer` and `inner` both say (`allOf` semantics); `outer`'s
/// annotations win.
pub(super) fn merge(
    outer: Map<String, Value>,
    inner: Map<String, Value>,
) -> Result<Map<String, Value>, Clash> {
    check_closures(&outer, &inner)?;
    check_closures(&inner, &outer)?;
    let mut owners = Map::new();
    owners.insert(String::new(), Value::String(own_pointer(&outer)));
    let mut out = Map::new();
    let mut unions: Vec<(String, Value)> = Vec::new();
    for (key, value) in &outer {
        if is_hidden(key) {
            continue;
        }
        owners.insert(key.clone(), Value::String(owner(&outer, key)));
        if matches!(key.as_str(), "anyOf" | "oneOf") {
            unions.push((key.clone(), value.clone()));
        } else {
            out.insert(key.clone(), value.clone());
        }
    }
    for (key, value) in &inner {
        if is_hidden(key) {
            continue;
        }
        if matches!(key.as_str(), "anyOf" | "oneOf") {
            unions.push((key.clone(), value.clone()));
            owners
                .entry(key.clone())
                .or_insert_with(|| Value::String(owner(&inner, key)));
            continue;
        }
        match out.get_mut(key) {
            None => {
                out.insert(key.clone(), value.clone());
                owners.insert(key.clone(), Value::String(owner(&inner, key)));
            }
            Some(existing) if existing == value => {}
            Some(existing) => combine(key, existing, value.clone())?,
        }
    }
    match unions.len() {
        0 => {}
        1 => {
            if let Some((key, value)) = unions.pop() {
                out.insert(key, value);
            }
        }
        _ => {
            let keyword = if unions.iter().all(|(key, _)| key == "oneOf") {
                "oneOf"
            } else {
                "anyOf"
            };
            let mut product = vec![Map::new()];
            for (_, alternatives) in unions {
                let alternatives = alternatives.as_array().cloned().unwrap_or_default();
                let mut next = Vec::new();
                for left in &product {
                    for right in &alternatives {
                        let Value::Object(right) = right else {
                            continue;
                        };
                        match merge(left.clone(), right.clone()) {
                            Ok(both) => next.push(both),
                            Err(Clash::Impossible(_)) => {}
                            Err(conflict) => return Err(conflict),
                        }
                    }
                }
                product = next;
            }
            if product.is_empty() {
                return Err(Clash::Impossible(keyword.to_owned()));
            }
            out.insert(
                keyword.to_owned(),
                Value::Array(product.into_iter().map(Value::Object).collect()),
            );
        }
    }
    literals_of_type(&mut out)?;
    out.insert(ORIGIN.to_owned(), Value::Object(owners));
    Ok(out)
}

/// The `const` or `enum` values of a merged schema that its `type` allows: a part's
/// `const: "k"` beside another's `type: object` can never hold.
fn literals_of_type(object: &mut Map<String, Value>) -> Result<(), Clash> {
    let listed = type_set(object.get("type").unwrap_or(&Value::Null));
    if listed.is_empty() {
        return Ok(());
    }
    let allowed = |value: &Value| {
        listed.iter().any(|ty| match (ty.as_str(), value) {
            ("null", Value::Null)
            | ("boolean", Value::Bool(_))
            | ("string", Value::String(_))
            | ("array", Value::Array(_))
            | ("object", Value::Object(_))
            | ("number", Value::Number(_)) => true,
            ("integer", Value::Number(number)) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|n| n.fract() == 0.0)
            }
            _ => false,
        })
    };
    if let Some(value) = object.get("const")
        && !allowed(value)
    {
        return Err(Clash::Impossible("const".to_owned()));
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| allowed(value));
        if values.is_empty() {
            return Err(Clash::Impossible("enum".to_owned()));
        }
    }
    Ok(())
}

/// A part closed on its own (`additionalProperties: false`) refuses the properties the
/// other part adds.
fn check_closures(closed: &Map<String, Value>, other: &Map<String, Value>) -> Result<(), Clash> {
    if closed.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Ok(());
    }
    let listed = |object: &Map<String, Value>| -> HashSet<String> {
        object
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    };
    let own = listed(closed);
    if listed(other).iter().any(|name| !own.contains(name)) {
        return Err(Clash::Conflict("additionalProperties".to_owned()));
    }
    Ok(())
}

const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
];
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
];

/// `existing` narrowed by `value`, both the same keyword and different.
fn combine(key: &str, existing: &mut Value, value: Value) -> Result<(), Clash> {
    if is_annotation(key) {
        return Ok(());
    }
    match key {
        "type" => {
            let left = type_set(existing);
            let right = type_set(&value);
            let mut both: Vec<String> = Vec::new();
            for ty in &left {
                let kept = if right.contains(ty) {
                    Some(ty.clone())
                } else if (ty == "integer" && right.iter().any(|other| other == "number"))
                    || (ty == "number" && right.iter().any(|other| other == "integer"))
                {
                    Some("integer".to_owned())
                } else {
                    None
                };
                if let Some(kept) = kept
                    && !both.contains(&kept)
                {
                    both.push(kept);
                }
            }
            *existing = match both.as_slice() {
                [] => return Err(Clash::Impossible("type".to_owned())),
                [one] => Value::String(one.clone()),
                _ => Value::Array(both.into_iter().map(Value::String).collect()),
            };
        }
        "properties" => {
            let (Value::Object(left), Value::Object(right)) = (existing, value) else {
                return Err(Clash::Conflict(key.to_owned()));
            };
            for (name, schema) in right {
                match left.get_mut(&name) {
                    None => {
                        left.insert(name, schema);
                    }
                    Some(present) if *present == schema => {}
                    Some(present) => *present = both_of(present.clone(), schema),
                }
            }
        }
        "items" => *existing = both_of(existing.clone(), value),
        "required" => {
            let (Value::Array(left), Value::Array(right)) = (existing, value) else {
                return Err(Clash::Conflict(key.to_owned()));
            };
            for name in right {
                if !left.contains(&name) {
                    left.push(name);
                }
            }
        }
        "enum" => {
            let (Value::Array(left), Value::Array(right)) = (existing, value) else {
                return Err(Clash::Conflict(key.to_owned()));
            };
            left.retain(|item| right.contains(item));
            if left.is_empty() {
                return Err(Clash::Impossible(key.to_owned()));
            }
        }
        "const" => return Err(Clash::Impossible(key.to_owned())),
        "uniqueItems" => *existing = Value::Bool(existing == &Value::Bool(true) || value == true),
        key if LOWER_BOUNDS.contains(&key) || UPPER_BOUNDS.contains(&key) => {
            let (Some(left), Some(right)) = (existing.as_f64(), value.as_f64()) else {
                return Err(Clash::Conflict(key.to_owned()));
            };
            let take_right = if LOWER_BOUNDS.contains(&key) {
                right > left
            } else {
                right < left
            };
            if take_right {
                *existing = value;
            }
        }
        _ => return Err(Clash::Conflict(key.to_owned())),
    }
    Ok(())
}

fn type_set(value: &Value) -> Vec<String> {
    match value {
        Value::String(ty) => vec![ty.clone()],
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// `{"allOf": [left, right]}`, flattened later with the rest.
fn both_of(left: Value, right: Value) -> Value {
    let mut object = Map::new();
    if let Value::Object(inner) = &left
        && let Some(origin) = inner.get(ORIGIN)
    {
        object.insert(ORIGIN.to_owned(), origin.clone());
    }
    object.insert("allOf".to_owned(), Value::Array(vec![left, right]));
    Value::Object(object)
}

/// How many references one schema may have inlined: definitions that each name another twice
/// double with every level, and a schema built at run time may be anyone's.
const MAX_INLINED: usize = 10_000;

/// Replaces every `$ref` by the definition it names, and drops the definitions. A reference
/// back into a definition being inlined (a recursive type) is an error `recursion` words.
pub(super) fn inline_all(
    ctx: &Ctx<'_>,
    schema: &mut Value,
    recursion: (&str, &str),
) -> Result<(), Failure> {
    let source = schema.clone();
    let mut stack = vec!["#".to_owned()];
    let mut budget = MAX_INLINED;
    inline(ctx, &source, schema, &mut stack, recursion, &mut budget)?;
    if let Value::Object(root) = schema {
        root.shift_remove("$defs");
        root.shift_remove("definitions");
    }
    Ok(())
}

fn inline(
    ctx: &Ctx<'_>,
    source: &Value,
    schema: &mut Value,
    stack: &mut Vec<String>,
    recursion: (&str, &str),
    budget: &mut usize,
) -> Result<(), Failure> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(target) = reference(object).map(str::to_owned) {
        if stack.contains(&target) {
            return Err(ctx.error("$ref", origin(object, "$ref"), recursion.0, recursion.1));
        }
        let Some(left) = budget.checked_sub(1) else {
            return Err(ctx.error(
                "$ref",
                origin(object, "$ref"),
                format!("makes more than {MAX_INLINED} copies of definitions once inlined"),
                "let fewer definitions name the same ones, or lower for a target that keeps `$ref`",
            ));
        };
        *budget = left;
        let Some(Value::Object(mut definition)) = resolve(source, &target) else {
            return Err(ctx.error(
                "$ref",
                origin(object, "$ref"),
                format!("names `{target}`, which is not a schema inside this one"),
                "use a local reference such as `#/$defs/Name`",
            ));
        };
        for (key, value) in std::mem::take(object) {
            if key != "$ref" && !is_hidden(&key) {
                definition.insert(key, value);
            }
        }
        let mut definition = Value::Object(definition);
        stack.push(target);
        let inlined = inline(ctx, source, &mut definition, stack, recursion, budget);
        stack.pop();
        inlined?;
        *schema = definition;
        return Ok(());
    }
    for (slot, child) in children_mut(object) {
        if !matches!(slot, Slot::Definition(..)) {
            inline(ctx, source, child, stack, recursion, budget)?;
        }
    }
    Ok(())
}

/// A [`LoweringError`](crate::providers::LoweringError) at the first reference that makes the
/// type recursive, worded by `recursion` (problem, fix).
pub(super) fn refuse_recursion(
    ctx: &Ctx<'_>,
    schema: &Value,
    recursion: (&str, &str),
) -> Result<(), Failure> {
    let mut done = HashSet::new();
    let mut stack = vec!["#".to_owned()];
    visit_references(ctx, schema, schema, &mut stack, &mut done, recursion)
}

fn visit_references(
    ctx: &Ctx<'_>,
    root: &Value,
    schema: &Value,
    stack: &mut Vec<String>,
    done: &mut HashSet<String>,
    recursion: (&str, &str),
) -> Result<(), Failure> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(target) = reference(object) {
        if stack.iter().any(|on| on == target) {
            return Err(ctx.error("$ref", origin(object, "$ref"), recursion.0, recursion.1));
        }
        if !done.contains(target)
            && let Some(definition) = resolve(root, target)
        {
            stack.push(target.to_owned());
            visit_references(ctx, root, &definition, stack, done, recursion)?;
            stack.pop();
            done.insert(target.to_owned());
        }
    }
    for (slot, child) in children(object) {
        if !matches!(slot, Slot::Definition(..)) {
            visit_references(ctx, root, child, stack, done, recursion)?;
        }
    }
    Ok(())
}

/// Drops the definitions nothing reaches from the root any more.
pub(super) fn prune_definitions(schema: &mut Value) {
    let Value::Object(root) = schema else {
        return;
    };
    let Some(Value::Object(definitions)) = root.get("$defs") else {
        return;
    };
    let name_of = |target: &str| -> Option<String> {
        let rest = target.strip_prefix("#/$defs/")?;
        let segment = rest.split('/').next()?;
        Some(segment.replace("~1", "/").replace("~0", "~"))
    };
    let mut reached: HashSet<String> = HashSet::new();
    let mut pending: Vec<String> = Vec::new();
    let mut found = Vec::new();
    references_outside_definitions(&Value::Object(root.clone()), true, &mut found);
    pending.extend(found.iter().filter_map(|target| name_of(target)));
    while let Some(name) = pending.pop() {
        if !reached.insert(name.clone()) {
            continue;
        }
        if let Some(definition) = definitions.get(&name) {
            let mut found = Vec::new();
            references_outside_definitions(definition, false, &mut found);
            pending.extend(found.iter().filter_map(|target| name_of(target)));
        }
    }
    let kept: Map<String, Value> = definitions
        .iter()
        .filter(|(name, _)| reached.contains(*name))
        .map(|(name, definition)| (name.clone(), definition.clone()))
        .collect();
    if kept.is_empty() {
        root.shift_remove("$defs");
    } else {
        root.insert("$defs".to_owned(), Value::Object(kept));
    }
}

fn references_outside_definitions(schema: &Value, root: bool, out: &mut Vec<String>) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(target) = reference(object) {
        out.push(target.to_owned());
    }
    for (slot, child) in children(object) {
        if root && matches!(slot, Slot::Definition(..)) {
            continue;
        }
        references_outside_definitions(child, false, out);
    }
}
