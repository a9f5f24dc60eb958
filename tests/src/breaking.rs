//! The tools of `tether-breaking-mcp`, a server made to break what
//! harnesses do between a server's `tools/list` and the model's request.

use serde_json::{Value, json};

/// The long names' shared start and end (30 and 36 characters).
const START: &str = "a_long_tool_name_with_a_start_";
const END: &str = "_and_an_end_that_is_the_same_in_both";
/// The other long names' shared start (64 characters).
const HEAD: &str = "a_sixty_four_character_start_that_two_tool_names_share_exactly_x";

/// The tools, in the order they are listed: each name, and its input
/// schema.
pub fn tools(many: usize) -> Vec<(String, Value)> {
    let plain = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
    });
    let mut tools: Vec<(String, Value)> = [
        "echo",
        "dotted.name",
        "name with space",
        "a.b",
        "a_b",
        "a-b",
        &format!("{START}one{END}"),
        &format!("{START}two{END}"),
        &format!("{HEAD}_1"),
        &format!("{HEAD}_2"),
    ]
    .iter()
    .map(|n| ((*n).to_owned(), plain.clone()))
    .collect();
    tools.push((
        "root_one_of".to_owned(),
        json!({
            "type": "object",
            "oneOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "number"}}, "required": ["b"]}
            ]
        }),
    ));
    tools.extend((0..many).map(|i| (format!("bulk_{i:03}"), plain.clone())));
    tools
}
