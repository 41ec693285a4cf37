//! Per-model facts: context window and prices (USD per million tokens).
//! Built-in figures cover common models; `[models."NAME"]` overrides them.

use std::collections::BTreeMap;

use super::{ConfigError, ModelEntry};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    pub context_window: u64,
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
}

/// Used when nothing is known of a model: small enough to be safe.
const UNKNOWN_CONTEXT: u64 = 128_000;

/// (name prefix, context window, input price, output price). Longest prefix wins.
const BUILTIN: &[(&str, u64, f64, f64)] = &[
    ("gpt-4.1", 1_047_576, 2.0, 8.0),
    ("gpt-4.1-mini", 1_047_576, 0.4, 1.6),
    ("gpt-4.1-nano", 1_047_576, 0.1, 0.4),
    ("gpt-4o", 128_000, 2.5, 10.0),
    ("gpt-4o-mini", 128_000, 0.15, 0.6),
    ("gpt-5", 400_000, 1.25, 10.0),
    ("gpt-5-mini", 400_000, 0.25, 2.0),
    ("gpt-5-nano", 400_000, 0.05, 0.4),
    ("o3", 200_000, 2.0, 8.0),
    ("o4-mini", 200_000, 1.1, 4.4),
    ("claude-opus-4", 200_000, 15.0, 75.0),
    ("claude-opus-4-5", 200_000, 5.0, 25.0),
    ("claude-sonnet-4", 200_000, 3.0, 15.0),
    ("claude-haiku-4-5", 200_000, 1.0, 5.0),
    ("claude-3-5-haiku", 200_000, 0.8, 4.0),
    ("claude-3-7-sonnet", 200_000, 3.0, 15.0),
    ("deepseek-chat", 128_000, 0.27, 1.1),
];

pub fn table(entries: &BTreeMap<String, ModelEntry>) -> Result<BTreeMap<String, ModelInfo>, ConfigError> {
    let mut out = BTreeMap::new();
    for (name, entry) in entries {
        let bad = |what: &str| ConfigError::Invalid(format!("[models.\"{name}\"] {what}"));
        if entry.context_window == Some(0) {
            return Err(bad("context_window must be more than 0"));
        }
        for price in [entry.input_price, entry.output_price].into_iter().flatten() {
            if !(price.is_finite() && price >= 0.0) {
                return Err(bad("prices must be zero or more (USD per million tokens)"));
            }
        }
        let base = builtin(name);
        out.insert(
            name.clone(),
            ModelInfo {
                context_window: entry.context_window.unwrap_or(base.context_window),
                input_price: entry.input_price.or(base.input_price),
                output_price: entry.output_price.or(base.output_price),
            },
        );
    }
    Ok(out)
}

pub fn lookup(table: &BTreeMap<String, ModelInfo>, model: &str) -> ModelInfo {
    table.get(model).copied().unwrap_or_else(|| builtin(model))
}

fn builtin(model: &str) -> ModelInfo {
    // Provider prefixes such as "openai/gpt-4.1" (OpenRouter) name the same model.
    let bare = model.rsplit('/').next().unwrap_or(model);
    BUILTIN
        .iter()
        .filter(|(prefix, ..)| bare.starts_with(prefix))
        .max_by_key(|(prefix, ..)| prefix.len())
        .map(|&(_, context_window, input, output)| ModelInfo {
            context_window,
            input_price: Some(input),
            output_price: Some(output),
        })
        .unwrap_or(ModelInfo { context_window: UNKNOWN_CONTEXT, input_price: None, output_price: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_and_router_prefixes() {
        assert_eq!(builtin("gpt-4.1-mini-2025-04-14").input_price, Some(0.4));
        assert_eq!(builtin("openai/gpt-4.1").input_price, Some(2.0));
        assert_eq!(builtin("claude-sonnet-4-5-20250929").output_price, Some(15.0));
        assert_eq!(
            builtin("llama3.2:3b"),
            ModelInfo { context_window: UNKNOWN_CONTEXT, input_price: None, output_price: None }
        );
    }

    #[test]
    fn config_overrides_builtin_figures() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "gpt-4.1".to_owned(),
            ModelEntry { context_window: None, input_price: Some(1.0), output_price: None },
        );
        let table = table(&entries).unwrap();
        assert_eq!(
            lookup(&table, "gpt-4.1"),
            ModelInfo { context_window: 1_047_576, input_price: Some(1.0), output_price: Some(8.0) }
        );
    }
}
