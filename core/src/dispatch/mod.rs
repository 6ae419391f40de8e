//! The one transport-neutral tool dispatcher.
//!
//! `MentisDb::call(tool, args)` takes an MCP tool name and its JSON arguments
//! and returns the JSON result with the spec's response fields, or a typed
//! [`ToolError`]. MCP (HTTP and stdio), REST, the browser API and the WASI
//! export are all adapters over this function; [`tool_specs`] gives each
//! tool's description and JSON Schema for MCP `tools/list`.

mod agent_tools;
mod ranked_tools;
mod thought_tools;

use crate::db::MentisDb;
use crate::error::ToolError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Arguments of tools that take none.
#[derive(Debug, Default, serde::Deserialize, JsonSchema)]
pub struct NoArgs {}

/// One tool: its name, description, argument schema and handler.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// MCP tool name, e.g. `mentisdb_append`.
    pub name: &'static str,
    /// One-paragraph description for agents.
    pub description: &'static str,
    schema: fn() -> Value,
    call: fn(&MentisDb, Value) -> Result<Value, ToolError>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A tool's public description, as MCP `tools/list` serves it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema (an `object` schema) of the arguments.
    pub input_schema: Value,
}

/// Builds a [`ToolDef`] from an argument type and a handler taking it.
macro_rules! tool {
    ($name:literal, $desc:expr, $args:ty, $handler:path) => {
        $crate::dispatch::ToolDef::new($name, $desc, $crate::dispatch::schema_of::<$args>, |db, v| {
            $handler(db, $crate::dispatch::parse_args::<$args>($name, v)?)
        })
    };
}
pub(crate) use tool;

impl ToolDef {
    #[doc(hidden)]
    pub const fn new(name: &'static str, description: &'static str, schema: fn() -> Value, call: fn(&MentisDb, Value) -> Result<Value, ToolError>) -> Self {
        ToolDef { name, description, schema, call }
    }
}

/// Every tool family's table. A new family adds its table here.
fn families() -> [&'static [ToolDef]; 4] {
    [thought_tools::TOOLS, agent_tools::TOOLS, crate::skills::tools::TOOLS, ranked_tools::TOOLS]
}

fn find(name: &str) -> Option<&'static ToolDef> {
    families().into_iter().flat_map(|f| f.iter()).find(|t| t.name == name)
}

/// Every tool with its description and argument schema, in a stable order.
pub fn tool_specs() -> Vec<ToolSpec> {
    families()
        .into_iter()
        .flat_map(|f| f.iter())
        .map(|t| ToolSpec { name: t.name, description: t.description, input_schema: (t.schema)() })
        .collect()
}

#[doc(hidden)]
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).expect("schema serializes");
    if let Some(obj) = v.as_object_mut() {
        obj.remove("$schema");
        obj.entry("type").or_insert(Value::String("object".into()));
    }
    v
}

#[doc(hidden)]
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() { Value::Object(Default::default()) } else { args };
    if !args.is_object() {
        return Err(ToolError::invalid(tool, "arguments must be a JSON object"));
    }
    serde_json::from_value(args).map_err(|e| ToolError::invalid(tool, e.to_string()))
}

impl MentisDb {
    /// Calls tool `tool` with JSON `args` (an object, or null for none).
    pub fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        let def = find(tool).ok_or_else(|| ToolError::UnknownTool(tool.chars().take(128).collect()))?;
        (def.call)(self, args)
    }

    /// Like [`MentisDb::call`] with the arguments as JSON text.
    pub fn call_json(&self, tool: &str, args_json: &str) -> Result<Value, ToolError> {
        let args: Value = if args_json.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(args_json).map_err(|e| ToolError::invalid(tool, format!("malformed JSON: {e}")))?
        };
        self.call(tool, args)
    }
}
