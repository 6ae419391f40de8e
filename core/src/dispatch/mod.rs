//! The one transport-neutral tool dispatcher.
//!
//! `MentisDb::call(tool, args)` takes an MCP tool name and its JSON arguments
//! and returns the JSON result with the spec's response fields, or a typed
//! [`ToolError`]. MCP (HTTP and stdio), REST, the browser API and the WASI
//! export are all adapters over this function; [`tool_specs`] gives each
//! tool's description and JSON Schema for MCP `tools/list`.
//!
//! Handlers serialize their result once, straight from the engine's data
//! (thoughts are written while the chain's read lock is held, not cloned);
//! [`MentisDb::call_raw`] hands that JSON text to hosts that send text (REST),
//! [`MentisDb::call`] parses it into a `Value` for the others. Tools marked
//! read-only never write or wait on storage, so a host may run them inline.

mod access;
mod agent_tools;
mod arg_formats;
mod chain_tools;
mod claim_tools;
mod fact_tools;
mod presence_tools;
mod review_tools;
mod graph_mode;
#[cfg(feature = "daemon-tools")]
mod model_tools;
mod profiles;
mod proof_tools;
// Run by core/build.rs, which embeds its output; compiled here for its tests.
#[cfg(test)]
mod listing_schema;
mod locator;
mod ranked_tools;
pub mod replies;
mod skill_tools;
#[cfg(feature = "daemon-tools")]
mod sync_tools;
mod thought_tools;
mod thought_reads;
#[cfg(feature = "daemon-tools")]
mod webhook_tools;

pub use access::{access_of, call_scope, Access, CallScope, Reach};
pub use crate::caller::{Caller, ChainReads};
pub use graph_mode::GraphMode;
pub use profiles::{listed_tools, select_tools, CORE_TOOLS};

use crate::db::{MentisDb, NotQueued, Queued, ReplyLater};
use crate::args::{self, read_args, ReadArgs};
use crate::error::ToolError;
use crate::text::{truncate_chars, MAX_ECHO_CHARS};
use schemars::JsonSchema;
use crate::json_text::JsonText;
use serde_json::Value;

/// Arguments of tools that take none.
#[derive(Debug, Default, JsonSchema)]
pub struct NoArgs {}
read_args!(NoArgs {});

/// A tool's handler: the database, who is calling (hosts with tokens), the
/// arguments and where to note the unknown argument fields it ignored.
type Handler = fn(&MentisDb, Option<Caller<'_>>, Value, &mut Vec<String>) -> Result<JsonText, ToolError>;

/// One tool: its name, description, access class, reach and handler. Its
/// schemas are kept out of this table: the argument schema is read from
/// `input_schemas.json` (see [`tool_specs`]), the reply type's is built by
/// [`output_schema`], so hosts link no schema-generating code for them.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// MCP tool name, e.g. `mentisdb_append`.
    pub name: &'static str,
    /// One-paragraph description for agents.
    pub description: &'static str,
    /// Never writes or waits on storage (reads memory only): the [`Access::Read`] tools.
    pub read_only: bool,
    /// The scope a caller needs (hosts with scoped tokens check it).
    pub access: Access,
    /// What the tool touches: its chain, the daemon only, or both.
    pub reach: Reach,
    /// A read that only scans memory (see [`is_quick_read`]): every read
    /// tool unless declared [`ToolDef::blocking`].
    pub quick: bool,
    call: Handler,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A tool's public description, as MCP `tools/list` serves it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    /// The tool's name, as callers pass it.
    pub name: &'static str,
    /// What the tool does, for the calling agent.
    pub description: &'static str,
    /// JSON Schema (an `object` schema) of the arguments.
    pub input_schema: Value,
    /// Never writes or waits on storage (MCP `readOnlyHint`).
    pub read_only: bool,
    /// The scope a caller needs: `read`, `write` or `admin`.
    pub access: Access,
    /// What the tool touches: its chain, the daemon only, or both.
    pub reach: Reach,
}

/// Builds a [`ToolDef`] from an argument type, its reply type (in
/// [`replies`]) and a handler taking the arguments and returning the reply,
/// or the reply already serialized with [`raw`] while borrowed data is
/// locked. The first word is the tool's [`Access`] class: `tool!(read ...)`
/// (read-only), `tool!(admin ...)`, and no word for a write. A trailing
/// `, caller` passes the handler the [`Caller`] too: `handler(db, caller, args)`.
/// The argument and reply types' schemas are built only by [`tools!`].
macro_rules! tool {
    (@def $access:ident, $name:literal, $desc:expr, $args:ty => $reply:ty, $handler:path) => {
        $crate::dispatch::ToolDef::new($name, $desc, $crate::dispatch::Access::$access, |db, _caller, v, unknown| {
            $handler(db, $crate::dispatch::parse_args::<$args>($name, v, unknown)?).map(|out| {
                #[allow(unused_imports)]
                use $crate::dispatch::{TypedReply as _, WrittenReply as _};
                $crate::dispatch::ReplyOf(out).text()
            })
        })
    };
    (@def $access:ident, $name:literal, $desc:expr, $args:ty => $reply:ty, $handler:path, caller) => {
        $crate::dispatch::ToolDef::new($name, $desc, $crate::dispatch::Access::$access, |db, caller, v, unknown| {
            $handler(db, caller, $crate::dispatch::parse_args::<$args>($name, v, unknown)?).map(|out| {
                #[allow(unused_imports)]
                use $crate::dispatch::{TypedReply as _, WrittenReply as _};
                $crate::dispatch::ReplyOf(out).text()
            })
        })
    };
    (read $($rest:tt)+) => { $crate::dispatch::tool!(@def Read, $($rest)+) };
    (admin $($rest:tt)+) => { $crate::dispatch::tool!(@def Admin, $($rest)+) };
    ($name:literal, $($rest:tt)+) => { $crate::dispatch::tool!(@def Write, $name, $($rest)+) };
}

/// A tool family's table: `tools! { tool!(...), tool!(...).daemon_wide(), }`
/// defines `TOOLS` (the [`ToolDef`]s), `reply_schema(tool)`, the JSON Schema
/// of each tool's reply type, and (in tests) `args_schema(tool)`, the JSON
/// Schema of its arguments that `input_schemas.json` must hold. The schemas
/// live in those functions, not in the table, so only hosts calling
/// [`output_schema`] link schema-generating code.
macro_rules! tools {
    ($(tool!($($access:ident)? $name:literal, $desc:expr, $args:ty => $reply:ty, $handler:path $(, $caller:ident)?) $(.$modifier:ident())*),+ $(,)?) => {
        /// This family's tools.
        pub(super) const TOOLS: &[$crate::dispatch::ToolDef] = &[
            $($crate::dispatch::tool!($($access)? $name, $desc, $args => $reply, $handler $(, $caller)?) $(.$modifier())*),+
        ];

        /// How to find the chains a call of `tool` names (every
        /// [`args::ChainKey`] of its argument type, read leniently; `None`
        /// for an omitted one, the default chain), if `tool` is in [`TOOLS`].
        pub(super) fn chains_named(tool: &str) -> Option<$crate::dispatch::ChainsNamed> {
            match tool {
                $($name => Some(|args| $crate::dispatch::chain_refs_of(&$crate::args::read_leniently::<$args>(args))),)+
                _ => None,
            }
        }

        /// The JSON Schema of `tool`'s reply type, if `tool` is in [`TOOLS`].
        pub(super) fn reply_schema(tool: &str) -> Option<serde_json::Value> {
            match tool {
                $($name => Some($crate::dispatch::schema_of::<$reply>()),)+
                _ => None,
            }
        }

        /// The JSON Schema of `tool`'s argument type, if `tool` is in [`TOOLS`].
        #[cfg(test)]
        pub(super) fn args_schema(tool: &str) -> Option<serde_json::Value> {
            match tool {
                $($name => Some($crate::dispatch::args_schema_of::<$args>()),)+
                _ => None,
            }
        }
    };
}
pub(crate) use tool;
pub(crate) use tools;

impl ToolDef {
    #[doc(hidden)]
    pub const fn new(name: &'static str, description: &'static str, access: Access, call: Handler) -> Self {
        let read_only = matches!(access, Access::Read);
        ToolDef { name, description, read_only, access, reach: Reach::Chain, quick: read_only, call }
    }

    /// The same read tool, not quick: it waits on storage, encodes megabytes
    /// or may call the host's embedding provider, so a host runs it on a
    /// blocking pool rather than on its event loop.
    pub(crate) const fn blocking(self) -> Self {
        ToolDef { quick: false, ..self }
    }

    /// The same tool, touching no chain (`mentisdb_list_chains`, skill reads).
    pub(crate) const fn daemon_wide(self) -> Self {
        ToolDef { reach: Reach::DaemonWide, ..self }
    }

    /// The same tool, touching every chain its `chain_keys` argument (or its
    /// `source_`/`target_`/`branch_chain_key` arguments) names.
    pub(crate) const fn many_chains(self) -> Self {
        ToolDef { reach: Reach::Chains, ..self }
    }

    /// The same tool, touching its chain and the daemon-wide skill registry.
    pub(crate) const fn with_skills(self) -> Self {
        ToolDef { reach: Reach::ChainAndSkills, ..self }
    }
}

/// A handler's result on its way to the reply's text: a typed reply is
/// serialized ([`TypedReply`]), one the handler already wrote ([`raw`],
/// or a hand writer such as [`replies::SearchReply::to_json`]) passes as it
/// is ([`WrittenReply`]). `tool!` calls `ReplyOf(out).text()`: method
/// lookup tries the receiver `ReplyOf<_>` itself before `&ReplyOf<_>`, so
/// `WrittenReply`, implemented on `ReplyOf<JsonText>`, wins for a
/// [`JsonText`] and `TypedReply`, implemented on `&ReplyOf<T: Serialize>`,
/// serves every other reply.
#[doc(hidden)]
pub struct ReplyOf<T>(pub T);

/// See [`ReplyOf`]: a reply already written.
#[doc(hidden)]
pub trait WrittenReply {
    /// The text.
    fn text(self) -> JsonText;
}

impl WrittenReply for ReplyOf<JsonText> {
    fn text(self) -> JsonText {
        self.0
    }
}

/// See [`ReplyOf`]: a typed reply, serialized.
#[doc(hidden)]
pub trait TypedReply {
    /// The text.
    fn text(self) -> JsonText;
}

impl<T: serde::Serialize> TypedReply for &ReplyOf<T> {
    fn text(self) -> JsonText {
        JsonText::of(&self.0)
    }
}

/// A result serialized while the data it borrows is still locked.
pub(crate) fn raw<T: serde::Serialize>(out: T) -> JsonText {
    JsonText::of(&out)
}

/// Every tool family's table. A new family adds its table here. The
/// families only a daemon can serve (memory extraction through a language
/// model, the daemon's side of sync, webhooks) come with the
/// `daemon-tools` feature (on by default; the browser build leaves it off).
fn families() -> &'static [&'static [ToolDef]] {
    &[
        thought_tools::TOOLS,
        agent_tools::TOOLS,
        skill_tools::TOOLS,
        ranked_tools::TOOLS,
        chain_tools::TOOLS,
        claim_tools::TOOLS,
        fact_tools::TOOLS,
        review_tools::TOOLS,
        presence_tools::TOOLS,
        #[cfg(feature = "daemon-tools")]
        model_tools::TOOLS,
        proof_tools::TOOLS,
        #[cfg(feature = "daemon-tools")]
        sync_tools::TOOLS,
        #[cfg(feature = "daemon-tools")]
        webhook_tools::TOOLS,
    ]
}

/// The prefix of MentisDB's tool names before it was renamed from ThoughtChain.
const LEGACY_PREFIX: &str = "thoughtchain_";

/// A tool by its name or its legacy `thoughtchain_` alias.
pub(crate) fn find(name: &str) -> Option<&'static ToolDef> {
    let exact = |name: &str| families().iter().flat_map(|f| f.iter()).find(|t| t.name == name);
    exact(name).or_else(|| {
        let rest = name.strip_prefix(LEGACY_PREFIX)?;
        families().iter().flat_map(|f| f.iter()).find(|t| t.name.strip_prefix("mentisdb_") == Some(rest))
    })
}

/// The tool's name as [`tool_specs`] lists it, for a tool name or a legacy
/// alias (`thoughtchain_append` names `mentisdb_append`, as MentisDB 0.10
/// accepts); `None` when neither names a tool. Every entry point (`call`,
/// [`access_of`], [`call_scope`]) accepts the aliases; hosts use this to
/// log, authorize and classify a call by its one canonical name.
pub fn canonical_tool_name(name: &str) -> Option<&'static str> {
    find(name).map(|t| t.name)
}

/// Every tool's argument schema (an object keyed by tool name), exactly as
/// schemars generates it from the argument types (`schema_of`); the test
/// `input_schemas_json_is_generated` checks that and rewrites the file when
/// run with `MENTISDB_BLESS_SCHEMAS=1`. Stored as text so that hosts serving
/// `tools/list` link no schema-generating code (it is most of the browser
/// build's schema cost), and embedded minified by `core/build.rs`. Only the
/// daemon serves it (OpenAPI); the browser embeds the listing form alone.
#[cfg(any(test, feature = "daemon-tools"))]
const INPUT_SCHEMAS: &str = include_str!(concat!(env!("OUT_DIR"), "/input_schemas.min.json"));

/// The same schemas as agents are shown them ([`listing_schema`]), made by `core/build.rs`.
const LISTING_SCHEMAS: &str = include_str!(concat!(env!("OUT_DIR"), "/listing_schemas.min.json"));

/// Every tool with its description and the argument schema agents are
/// shown (no `pattern`, `format` or `title`; see `listing_schema.rs`), in a
/// stable order: what `tools/list` serves.
pub fn tool_specs() -> Vec<ToolSpec> {
    let mut schemas: serde_json::Map<String, Value> = serde_json::from_str(LISTING_SCHEMAS).expect("listing schemas are a JSON object");
    families()
        .iter()
        .flat_map(|f| f.iter())
        .map(|t| ToolSpec {
            name: t.name,
            description: t.description,
            input_schema: schemas.remove(t.name).expect("the listing schemas have every tool"),
            read_only: t.read_only,
            access: t.access,
            reach: t.reach,
        })
        .collect()
}

/// Every tool's full argument schema (with the text patterns and integer
/// formats the listing leaves out), keyed by tool name: what an OpenAPI
/// document states, so that generated requests are valid ones.
#[cfg(feature = "daemon-tools")]
pub fn full_input_schemas() -> serde_json::Map<String, Value> {
    serde_json::from_str(INPUT_SCHEMAS).expect("input_schemas.json is a JSON object")
}

/// The [`args::ChainKey`]s of parsed arguments, owned.
pub(crate) fn chain_refs_of<T: args::FromArg>(args: &T) -> Vec<Option<String>> {
    let mut out = Vec::new();
    args.chain_refs(&mut out);
    out.into_iter().map(|k| k.map(str::to_string)).collect()
}

/// The chains a call names, by the types of its arguments (`None` for an
/// unknown tool). The arguments are read leniently: a `ChainKey` that
/// reads is exactly the key the tool will use; one that does not makes the
/// call fail on it, whatever this says. Kept out of [`ToolDef`] (like
/// [`output_schema`]) so hosts without tokens (the browser) do not link it.
pub(crate) fn chains_named(tool: &str, args: Value) -> Option<Vec<Option<String>>> {
    let families: &[fn(&str) -> Option<ChainsNamed>] = &[
        thought_tools::chains_named,
        agent_tools::chains_named,
        skill_tools::chains_named,
        ranked_tools::chains_named,
        chain_tools::chains_named,
        claim_tools::chains_named,
        fact_tools::chains_named,
        review_tools::chains_named,
        presence_tools::chains_named,
        #[cfg(feature = "daemon-tools")]
        model_tools::chains_named,
        proof_tools::chains_named,
        #[cfg(feature = "daemon-tools")]
        sync_tools::chains_named,
        #[cfg(feature = "daemon-tools")]
        webhook_tools::chains_named,
    ];
    let tool = canonical_tool_name(tool)?;
    families.iter().find_map(|f| f(tool)).map(|named| named(args))
}

/// Reads a call's arguments and returns the chains they name.
#[doc(hidden)]
pub type ChainsNamed = fn(Value) -> Vec<Option<String>>;

/// JSON Schema of `tool`'s result: its reply type in [`replies`], or `None`
/// for an unknown tool. Not served (`tools/list` and `list-tools` carry only
/// [`ToolSpec`]); the drift tests compare it with the hosts' TypeScript and
/// WIT declarations. Kept apart from [`tool_specs`] so that hosts that never
/// call it (the browser build) do not link the reply types' schemas.
pub fn output_schema(tool: &str) -> Option<Value> {
    let families: &[fn(&str) -> Option<Value>] = &[
        thought_tools::reply_schema,
        agent_tools::reply_schema,
        skill_tools::reply_schema,
        ranked_tools::reply_schema,
        chain_tools::reply_schema,
        claim_tools::reply_schema,
        fact_tools::reply_schema,
        review_tools::reply_schema,
        presence_tools::reply_schema,
        #[cfg(feature = "daemon-tools")]
        model_tools::reply_schema,
        proof_tools::reply_schema,
        #[cfg(feature = "daemon-tools")]
        sync_tools::reply_schema,
        #[cfg(feature = "daemon-tools")]
        webhook_tools::reply_schema,
    ];
    families.iter().find_map(|schema| schema(tool))
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

/// [`schema_of`] an argument type, with the rules its argument names promise
/// ([`arg_formats`]).
#[cfg(test)]
fn args_schema_of<T: JsonSchema>() -> Value {
    let mut v = schema_of::<T>();
    arg_formats::apply(&mut v);
    v
}

/// A tool's arguments (a JSON object, or `null` for none) read as its
/// argument type ([`args`] says how). Warnings about them go to
/// `warnings`: each unknown field ignored (one close to a known field is
/// an error: [`unknown_fields`]) and each number moved into its range
/// ([`bounded`]).
pub(crate) fn parse_args<T: ReadArgs + args::FromArg>(tool: &str, args: Value, warnings: &mut Vec<String>) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => serde_json::Map::new(),
        Value::Object(map) => map,
        _ => return Err(ToolError::invalid(tool, "arguments must be a JSON object")),
    };
    let read: T = args::read_object(args, warnings).map_err(|e| ToolError::invalid(tool, e))?;
    read.notes(&crate::args::ArgPath::Top, warnings);
    Ok(read)
}

/// `raw` (a JSON object) with the argument `warnings` added to the reply's
/// own `warnings` when it has them.
fn with_argument_warnings(raw: JsonText, warnings: Vec<String>) -> JsonText {
    if warnings.is_empty() {
        return raw;
    }
    let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(raw.get()) else { return raw };
    let notes = warnings.into_iter().map(Value::String);
    match reply.get_mut("warnings") {
        Some(Value::Array(existing)) => existing.extend(notes),
        _ => {
            reply.insert("warnings".into(), Value::Array(notes.collect()));
        }
    }
    JsonText::of(&reply)
}

/// Whether `tool` is a known read-only tool (see [`ToolDef::read_only`]).
pub fn is_read_only(tool: &str) -> bool {
    find(tool).is_some_and(|t| t.read_only)
}

/// Whether `tool` is read-only and only scans memory: it never waits on
/// storage, never calls the host's embedding provider and never builds the
/// ranked index. A host may run such a call on an event loop; the ranked
/// tools (which may embed the query through a model) and every write belong
/// on a blocking pool, except what [`MentisDb::call_raw_now`] answers and
/// the appends [`MentisDb::append_tool_now`] writes.
///
/// Each tool declares it in its table ([`ToolDef::quick`]).
pub fn is_quick_read(tool: &str) -> bool {
    find(tool).is_some_and(|t| t.quick)
}

/// Whether [`MentisDb::call_raw_now`] may answer `tool` (for some
/// arguments and some state): a host asks before doing any work towards it.
pub fn may_answer_now(tool: &str) -> bool {
    tool == "mentisdb_ranked_search"
}

impl MentisDb {
    /// Whether `tool` is an append tool (`mentisdb_append`,
    /// `mentisdb_append_retrospective`) this engine writes with
    /// [`MentisDb::append_tool_now`]:
    /// its backend's appends are quick ([`crate::Storage::quick_appends`])
    /// and no `dedup_threshold` makes an append scan the chain. Otherwise
    /// call it as any tool.
    pub fn queues_appends(&self, tool: &str) -> bool {
        thought_tools::is_append_tool(tool) && self.queues_appends_at_all()
    }

    /// Writes append tool `tool` now, on a host's event loop, unless that
    /// would wait (its chain not in memory, the chain's lock held:
    /// [`NotQueued::Busy`], to try again or to wait where waiting is fine).
    /// Once written, its reply is queued and goes to `later` after the
    /// chain's sync, made by the [`crate::Drain`] this or an earlier call
    /// returned ([`Queued`]). Ask [`MentisDb::queues_appends`] first.
    pub fn append_tool_now(&self, tool: &str, args: Value, later: ReplyLater) -> Result<Queued, NotQueued> {
        thought_tools::append_tool_now(self, tool, args, later)
    }
}

impl MentisDb {
    /// Calls tool `tool` with JSON `args` (an object, or null for none).
    pub fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        let raw = self.call_raw(tool, args)?;
        Ok(serde_json::from_str(raw.get()).expect("the dispatcher writes valid JSON"))
    }

    /// [`MentisDb::call`], returning the result as the JSON text it was serialized to.
    pub fn call_raw(&self, tool: &str, args: Value) -> Result<JsonText, ToolError> {
        self.call_raw_as(None, tool, args)
    }

    /// [`MentisDb::call_raw`] on behalf of an authenticated caller (a host's
    /// token name): skill uploads record it and the skill ownership rule
    /// checks it. `None` is an unauthenticated host (stdio, browser, WASI).
    /// Access is the host's to check ([`access_of`], [`call_scope`]).
    pub fn call_raw_as(&self, caller: Option<Caller<'_>>, tool: &str, args: Value) -> Result<JsonText, ToolError> {
        let def = find(tool).ok_or_else(|| ToolError::UnknownTool(truncate_chars(tool, MAX_ECHO_CHARS).to_string()))?;
        let mut warnings = Vec::new();
        let raw = (def.call)(self, caller, args, &mut warnings)?;
        Ok(with_argument_warnings(raw, warnings))
    }

    /// Runs `tool` only if it answers now, with nothing to wait for (no lock
    /// another thread holds, no chain to load, no model to run, no index to
    /// catch up, no long walk): a call a host may run on its event loop
    /// rather than hand to a thread. `None`, with nothing done, when it
    /// would have to wait or is not a tool that can tell: then call
    /// [`MentisDb::call_raw_as`] where waiting is fine. Today only
    /// `mentisdb_ranked_search` can tell (`ranked_tools::ranked_search_now`:
    /// a small query over a chain of at most 10,000 thoughts); the quick
    /// reads ([`is_quick_read`]) never wait and need no asking. A branch
    /// chain, which reads its parents, is never answered now, so the caller
    /// (whose read scope limits which parents it sees) is not needed.
    pub fn call_raw_now(&self, tool: &str, args: &Value) -> Option<Result<JsonText, ToolError>> {
        if !may_answer_now(tool) {
            return None;
        }
        let mut warnings = Vec::new();
        let answered = match parse_args::<ranked_tools::RankedSearchArgs>(tool, args.clone(), &mut warnings) {
            Ok(a) => ranked_tools::ranked_search_now(self, &a)?,
            Err(e) => Err(e),
        };
        Some(answered.map(|raw| with_argument_warnings(raw, warnings)))
    }

    /// [`MentisDb::call`], read as the tool's typed reply `R` (from
    /// [`replies`]): how a host with typed methods (the browser's, the WASI
    /// component's) takes a reply apart, never by field name. `R` must be
    /// `tool`'s reply type: another type is a bug of the host, and panics.
    pub fn call_as<R: serde::de::DeserializeOwned>(&self, tool: &str, args: Value) -> Result<R, ToolError> {
        let raw = self.call_raw(tool, args)?;
        Ok(serde_json::from_str(raw.get()).unwrap_or_else(|e| panic!("{tool}'s reply does not read as {}: {e}", std::any::type_name::<R>())))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_a_json_object_whose_errors_name_the_field() {
        assert!(parse_args::<NoArgs>("t", Value::Null, &mut Vec::new()).is_ok(), "null is no arguments");
        let e = parse_args::<NoArgs>("t", serde_json::json!([1]), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("arguments must be a JSON object"), "{e}");
        let e = parse_args::<thought_tools::AppendArgs>("mentisdb_append", serde_json::json!({"thought_type": "Insight", "content": "c", "refs": [1, -2]}), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("invalid `refs[1]`: expected a non-negative integer"), "{e}");
    }

    /// The JSON Schema of every tool's arguments, as schemars generates it.
    fn generated_input_schemas() -> serde_json::Map<String, Value> {
        families()
            .iter()
            .flat_map(|f| f.iter())
            .map(|t| {
                let schema = thought_tools::args_schema(t.name)
                    .or_else(|| agent_tools::args_schema(t.name))
                    .or_else(|| skill_tools::args_schema(t.name))
                    .or_else(|| ranked_tools::args_schema(t.name))
                    .or_else(|| chain_tools::args_schema(t.name))
                    .or_else(|| claim_tools::args_schema(t.name))
                    .or_else(|| fact_tools::args_schema(t.name))
                    .or_else(|| review_tools::args_schema(t.name))
                    .or_else(|| presence_tools::args_schema(t.name))
                    .or_else(|| model_tools::args_schema(t.name))
                    .or_else(|| proof_tools::args_schema(t.name))
                    .or_else(|| sync_tools::args_schema(t.name))
                    .or_else(|| webhook_tools::args_schema(t.name))
                    .expect("every tool has an argument type");
                (t.name.to_string(), schema)
            })
            .collect()
    }

    #[test]
    fn agents_are_shown_the_listing_form_of_every_full_schema() {
        let mut full = full_input_schemas();
        for spec in tool_specs() {
            let schema = full.remove(spec.name).expect("a full schema");
            assert_eq!(spec.input_schema, listing_schema::for_listing(schema), "{}", spec.name);
            assert!(!spec.input_schema.to_string().contains("\"pattern\""), "{}", spec.name);
        }
        assert!(full.is_empty());
    }

    #[test]
    fn input_schemas_json_is_generated() {
        let generated = generated_input_schemas();
        let stored: serde_json::Map<String, Value> = serde_json::from_str(INPUT_SCHEMAS).unwrap();
        if stored == generated {
            return;
        }
        if std::env::var_os("MENTISDB_BLESS_SCHEMAS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/dispatch/input_schemas.json");
            std::fs::write(path, serde_json::to_string_pretty(&generated).unwrap() + "\n").unwrap();
            eprintln!("rewrote {path}");
            return;
        }
        panic!("src/dispatch/input_schemas.json differs from the argument types' schemas: rerun with MENTISDB_BLESS_SCHEMAS=1 and commit the file");
    }

    #[test]
    fn reads_writes_and_quick_reads_are_told_apart() {
        for quick in ["mentisdb_search", "mentisdb_head", "mentisdb_traverse_thoughts", "mentisdb_list_agents", "mentisdb_read_skill"] {
            assert!(is_read_only(quick) && is_quick_read(quick), "{quick}");
        }
        assert!(is_read_only("mentisdb_export_chain") && !is_quick_read("mentisdb_export_chain"), "export reads storage");
        assert!(is_read_only("mentisdb_catch_up") && !is_quick_read("mentisdb_catch_up"), "catching up reads storage");
        assert!(is_read_only("mentisdb_chain_records") && !is_quick_read("mentisdb_chain_records"), "a page encodes megabytes");
        for ranked in ["mentisdb_ranked_search", "mentisdb_context_bundles", "mentisdb_resolve_context"] {
            assert!(is_read_only(ranked) && !is_quick_read(ranked), "{ranked} may call the embedding model");
        }
        for write in ["mentisdb_append", "mentisdb_bootstrap", "mentisdb_add_agent_key", "mentisdb_upload_skill", "no_such_tool"] {
            assert!(!is_read_only(write) && !is_quick_read(write), "{write}");
        }
        assert_eq!(tool_specs().iter().filter(|t| t.read_only).count(), 36);
        for t in families().iter().flat_map(|f| f.iter()) {
            assert!(!t.quick || t.read_only, "{} is a write: never quick", t.name);
        }
    }
}
