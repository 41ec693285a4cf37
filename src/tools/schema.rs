//! The shape gate: checks a call's arguments against the tool's JSON Schema
//! before anything else looks at them, so every mistake comes back to the
//! model as a sentence naming the field. Covers the subset of JSON Schema
//! hew's tools use: type, properties, required, additionalProperties,
//! items, enum, minimum and maximum.

use serde_json::Value;

/// Parses the raw argument text and checks it. Empty text counts as `{}`
/// (some servers send nothing for a call without arguments).
pub fn parse_arguments(raw: &str, schema: &Value) -> Result<Value, String> {
    let value: Value = if raw.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str(raw)
            .map_err(|e| format!("the arguments are not valid JSON ({e}); send one JSON object"))?
    };
    validate(&value, schema, "")?;
    Ok(value)
}

pub fn validate(value: &Value, schema: &Value, at: &str) -> Result<(), String> {
    let name = |at: &str| if at.is_empty() { "the arguments".to_owned() } else { format!("field `{at}`") };
    if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !has_type(value, expected)
    {
        return Err(format!("{} must be {}, not {}", name(at), article(expected), describe(value)));
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!("{} must be one of {}, not {value}", name(at), list.join(", ")));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{} must be at least {min}, not {n}", name(at)));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{} must be at most {max}, not {n}", name(at)));
        }
    }
    if let (Some(object), Some(properties)) = (value.as_object(), schema.get("properties").and_then(Value::as_object)) {
        let field = |key: &str| if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") };
        for required in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
        {
            if object.get(required).is_none_or(Value::is_null) {
                return Err(format!("missing required field `{}`", field(required)));
            }
        }
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        for (key, item) in object {
            match properties.get(key) {
                // An explicit null for an optional field means "not given".
                Some(_) if item.is_null() => {}
                Some(sub) => validate(item, sub, &field(key))?,
                None if closed => {
                    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    return Err(format!("unknown field `{}` (the fields are: {})", field(key), known.join(", ")));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(schema)) = (value.as_array(), schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            validate(item, schema, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "null" => value.is_null(),
        _ => true,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        _ => format!("a {kind}"),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() > 40 => "a string".into(),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 1},
                "all": {"type": "boolean"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"status": {"enum": ["a", "b"]}}, "required": ["status"]}}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn check(raw: &str) -> Result<Value, String> {
        parse_arguments(raw, &schema())
    }

    #[test]
    fn good_arguments_pass_and_nulls_mean_absent() {
        assert!(check(r#"{"path":"a","offset":3,"all":true}"#).is_ok());
        assert!(check(r#"{"path":"a","offset":null}"#).is_ok());
        assert!(check(r#"{"path":"a","offset":3.0}"#).is_ok());
    }

    #[test]
    fn every_mistake_names_the_field() {
        let cases = [
            ("{\"path\":", "the arguments are not valid JSON"),
            ("[1,2]", "the arguments must be an object, not an array"),
            ("{}", "missing required field `path`"),
            (r#"{"path":null}"#, "missing required field `path`"),
            (r#"{"path":7}"#, "field `path` must be a string, not the number 7"),
            (r#"{"path":"a","offset":"3"}"#, "field `offset` must be an integer, not the string \"3\""),
            (r#"{"path":"a","offset":0}"#, "field `offset` must be at least 1"),
            (r#"{"path":"a","colour":1}"#, "unknown field `colour` (the fields are: all, items, offset, path)"),
            (r#"{"path":"a","items":[{"status":"c"}]}"#, "field `items[0].status` must be one of \"a\", \"b\""),
            (r#"{"path":"a","items":[{}]}"#, "missing required field `items[0].status`"),
        ];
        for (raw, expected) in cases {
            let err = check(raw).unwrap_err();
            assert!(err.starts_with(expected), "{raw}: {err}");
        }
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(parse_arguments("  ", &json!({"type": "object"})), Ok(json!({})));
    }
}
