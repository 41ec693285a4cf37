use super::cost;
use crate::config::ModelInfo;
use crate::provider::Usage;

#[test]
fn cost_is_tokens_times_price_per_million() {
    let model = ModelInfo { context_window: 1, input_price: Some(2.0), output_price: Some(8.0) };
    let usage = Usage { input_tokens: 1_000_000, output_tokens: 500_000, cached_input_tokens: 0 };
    assert_eq!(cost(usage, &model), Some(6.0));
    let unknown = ModelInfo { context_window: 1, input_price: None, output_price: Some(8.0) };
    assert_eq!(cost(usage, &unknown), None);
}
