//! Tool profiles: which tools a host offers an agent.
//!
//! Every tool an agent is offered costs context in every conversation (its
//! description and argument schema). An agent that only remembers and
//! recalls needs a handful, so a host may offer a profile: `all` (every
//! tool, the default), `core` ([`CORE_TOOLS`]) or a list of tool names. A
//! profile decides what is *listed*; calls are answered for every tool.

use super::{canonical_tool_name, families};

/// The `core` profile: what an agent needs to remember and recall.
pub const CORE_TOOLS: &[&str] = &[
    "mentisdb_skill_md",
    "mentisdb_list_chains",
    "mentisdb_bootstrap",
    "mentisdb_append",
    "mentisdb_append_retrospective",
    "mentisdb_ranked_search",
    "mentisdb_recent_context",
    "mentisdb_get_thought",
    "mentisdb_head",
];

/// A profile as configured: `all`, `core`, or tool names (MentisDB 0.10
/// aliases accepted) separated by commas or spaces. The tools it lists, in
/// [`super::tool_specs`] order, or a one-line error naming what is wrong.
pub fn select_tools(profile: &str) -> Result<Vec<&'static str>, String> {
    let profile = profile.trim();
    let all: Vec<&'static str> = families().iter().flat_map(|f| f.iter()).map(|t| t.name).collect();
    if profile.is_empty() || profile.eq_ignore_ascii_case("all") {
        return Ok(all);
    }
    let wanted: Vec<&'static str> = if profile.eq_ignore_ascii_case("core") {
        CORE_TOOLS.to_vec()
    } else {
        let mut names = Vec::new();
        for given in profile.split([',', ' ']).map(str::trim).filter(|n| !n.is_empty()) {
            let name = canonical_tool_name(given).ok_or_else(|| format!("unknown tool '{}' in the tool profile; give all, core, or tool names from tools/list", crate::text::truncate_chars(given, 64)))?;
            names.push(name);
        }
        names
    };
    Ok(all.into_iter().filter(|n| wanted.contains(n)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::tool_specs;

    #[test]
    fn profiles_name_tools_that_exist() {
        assert_eq!(select_tools("all").unwrap().len(), tool_specs().len());
        assert_eq!(select_tools("").unwrap().len(), tool_specs().len());
        let core = select_tools("CORE").unwrap();
        assert_eq!(core.len(), CORE_TOOLS.len(), "every core tool exists");
        assert_eq!(select_tools("thoughtchain_append, mentisdb_search").unwrap(), ["mentisdb_append", "mentisdb_search"]);
        let e = select_tools("mentisdb_append,mentisdb_nope").unwrap_err();
        assert!(e.contains("'mentisdb_nope'") && !e.contains('\n'), "{e}");
    }
}
