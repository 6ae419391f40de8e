//! [`SkillRegistry`]: the in-memory index of every skill, rebuilt by
//! replaying the log, plus the rules that decide whether an event may be
//! written (ownership, lifecycle). Pure: no storage, no clock.

use super::document;
use super::error::SkillError;
use super::log::SkillEvent;
use super::model::{Skill, SkillDocument, SkillFormat, SkillStatus, SkillVersion, StatusChange};
use crate::text::truncate_chars;
use crate::timestamp::format_rfc3339_millis;

use std::collections::BTreeMap;

/// The agent performing a write, as resolved (and authenticated) from a
/// chain's agent registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The agent's id.
    pub agent_id: String,
    /// The agent's display name.
    pub agent_name: String,
    /// The agent's owner, if any.
    pub agent_owner: Option<String>,
}

/// A version to upload, as the caller sent it.
#[derive(Debug, Clone)]
pub struct NewVersion<'a> {
    /// The caller's (already validated) id, or `None` to derive it from the name.
    pub skill_id: Option<&'a str>,
    /// The format of `content`.
    pub format: SkillFormat,
    /// The uploaded text.
    pub content: &'a str,
    /// Key id and signature, already verified by the caller.
    pub signature: Option<(String, Vec<u8>)>,
    /// The authenticated caller (a host's token), recorded on the version.
    pub caller: Option<crate::caller::Caller<'a>>,
    /// Fresh id of the version.
    pub version_id: String,
    /// Upload time, epoch milliseconds.
    pub now_millis: i64,
}

/// What a write step decided, under the registry's write lock.
// One short-lived value per write: boxing the event would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum SkillWrite {
    /// Persist this event (with the upload's parsed document, when it has one).
    Event(SkillEvent, Option<SkillDocument>),
    /// Nothing to write: the upload repeats the skill's latest version (same
    /// content, format, uploader and signature), so it is answered as a replay.
    Unchanged {
        /// The skill the upload named.
        skill_id: String,
    },
}

/// A persisted status change names a skill the registry does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("status change for unknown skill '{skill_id}'")]
pub struct UnknownSkill {
    /// The skill the event names.
    pub skill_id: String,
}

/// Who makes a status change: the agent the request names (checked against
/// the creator's ownership rule), or none (the operator), and the
/// authenticated caller, if any.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChangedBy<'a> {
    /// The acting agent; `None` when the operator acts.
    pub agent: Option<&'a Actor>,
    /// The authenticated caller (a host's token name).
    pub caller: Option<&'a str>,
}

/// Every skill, by id.
#[derive(Debug, Clone, Default)]
pub struct SkillRegistry {
    skills: BTreeMap<String, Skill>,
}

/// A `skill_id` derived from a name: lower-case letters and digits, other
/// runs of characters become one `-`.
pub(super) fn skill_id_from_name(name: &str) -> Option<String> {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = truncate_chars(out.trim_end_matches('-'), 128).trim_end_matches('-').to_string();
    (!out.is_empty()).then_some(out)
}

/// SHA-256 of the content bytes, lowercase hex.
pub(super) fn content_hash(content: &str) -> String {
    hex::encode(crate::sha256::digest(&[content.as_bytes()]))
}

impl SkillRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// One skill.
    pub fn get(&self, skill_id: &str) -> Option<&Skill> {
        self.skills.get(skill_id)
    }

    /// One skill, or [`SkillError::NotFound`].
    pub fn require(&self, skill_id: &str) -> Result<&Skill, SkillError> {
        self.get(skill_id).ok_or_else(|| SkillError::NotFound { skill_id: skill_id.to_string() })
    }

    /// Every skill, ordered by id.
    pub fn skills(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// Number of skills.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether the registry holds no skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Whether `actor` may change `skill`: same `agent_owner` as the creator
    /// (the first version's uploader), or, when the creator had no owner,
    /// the creator agent itself.
    pub fn check_owner(skill: &Skill, actor: &Actor, action: &'static str) -> Result<(), SkillError> {
        let creator = skill.first();
        let (allowed, rule) = match &creator.uploaded_by_agent_owner {
            Some(owner) => (
                actor.agent_owner.as_deref() == Some(owner.as_str()),
                format!("the creator '{}' is owned by '{owner}'; agent '{}' is owned by {}", creator.uploaded_by_agent_id, actor.agent_id, actor.agent_owner.as_deref().map(|o| format!("'{o}'")).unwrap_or_else(|| "no one".into())),
            ),
            None => (actor.agent_id == creator.uploaded_by_agent_id, format!("the creator '{}' has no agent_owner, so only that agent may", creator.uploaded_by_agent_id)),
        };
        if allowed {
            Ok(())
        } else {
            Err(SkillError::NotOwner { agent_id: actor.agent_id.clone(), skill_id: skill.skill_id.clone(), action, owner_rule: rule })
        }
    }

    /// Whether `caller` may add a version to `skill`. A skill is
    /// daemon-wide: through a daemon with tokens only a token covering every
    /// chain may change one that exists (a token scoped to some chains may
    /// create new skills, never rewrite another team's). When the creator's
    /// upload had an authenticated caller (a token name), new versions must
    /// also come from that same token or from an admin token on every chain.
    fn check_caller(skill: &Skill, caller: Option<crate::caller::Caller<'_>>, actor: &Actor) -> Result<(), SkillError> {
        if let Some(c) = caller.filter(|c| !c.all_chains) {
            let owner_rule = format!("token '{}' covers only some chains; an existing skill is daemon-wide and takes new versions only from a token covering every chain ('*')", c.name);
            return Err(SkillError::NotOwner { agent_id: actor.agent_id.clone(), skill_id: skill.skill_id.clone(), action: "add a version to", owner_rule });
        }
        let Some(creator) = &skill.first().uploaded_by_caller else { return Ok(()) };
        if caller.is_some_and(|c| c.admin || c.name == creator) {
            return Ok(());
        }
        let given = caller.map(|c| format!("token '{}'", c.name)).unwrap_or_else(|| "a call without a token".into());
        let owner_rule = format!("the skill was created through token '{creator}'; new versions must come from that token or an admin token, not {given}");
        Err(SkillError::NotOwner { agent_id: actor.agent_id.clone(), skill_id: skill.skill_id.clone(), action: "add a version to", owner_rule })
    }

    /// Validates an upload by `actor` and returns the event to persist with
    /// the parsed document, or [`SkillWrite::Unchanged`] when it repeats the
    /// skill's latest version (an upload retried after a timeout).
    pub fn prepare_upload(&self, actor: &Actor, new: NewVersion<'_>) -> Result<SkillWrite, SkillError> {
        let NewVersion { skill_id, format, content, signature, version_id, now_millis, caller } = new;
        let doc = document::parse(format, content, skill_id).map_err(|error| SkillError::InvalidContent { format: format.as_str(), error })?;
        let skill_id = match skill_id {
            Some(id) => id.to_string(),
            None => skill_id_from_name(&doc.name).ok_or_else(|| SkillError::InvalidField {
                field: "skill_id",
                message: format!("cannot derive a skill_id from the name '{}'; pass skill_id", truncate_chars(&doc.name, 64)),
            })?,
        };
        if let Some(skill) = self.get(&skill_id) {
            let latest = skill.latest();
            let same_caller = latest.uploaded_by_caller.as_deref() == caller.map(|c| c.name);
            if latest.content == content && latest.source_format == format && latest.uploaded_by_agent_id == actor.agent_id && latest.signature == signature && same_caller {
                return Ok(SkillWrite::Unchanged { skill_id });
            }
            if skill.status == SkillStatus::Revoked {
                return Err(SkillError::Revoked { skill_id, action: "given new versions" });
            }
            Self::check_owner(skill, actor, "add a version to")?;
            Self::check_caller(skill, caller, actor)?;
        }
        let ev = SkillEvent::Upload {
            skill_id,
            version_id,
            uploaded_at_millis: now_millis,
            agent_id: actor.agent_id.clone(),
            agent_name: actor.agent_name.clone(),
            agent_owner: actor.agent_owner.clone(),
            source_format: format,
            content: content.to_string(),
            signature,
            caller: caller.map(|c| c.name.to_string()),
        };
        Ok(SkillWrite::Event(ev, Some(doc)))
    }

    /// Validates a lifecycle change (`deprecated` or `revoked`) and returns the
    /// event; `signature` was verified by the caller. With an `actor` (an
    /// agent the request names), only agents the creator's ownership rule
    /// admits may change the status. Without one, the operator makes the
    /// change: the tool's access class (admin) was the check, and the event
    /// records the authenticated `caller`, if any.
    pub fn prepare_status(&self, skill_id: &str, by: ChangedBy<'_>, status: SkillStatus, reason: Option<String>, signature: Option<(String, Vec<u8>)>, now_millis: i64) -> Result<SkillEvent, SkillError> {
        let ChangedBy { agent: actor, caller } = by;
        let skill = self.require(skill_id)?;
        let action = match status {
            SkillStatus::Deprecated => "deprecate",
            SkillStatus::Revoked => "revoke",
            SkillStatus::Active => "reactivate",
        };
        if skill.status == SkillStatus::Revoked {
            return Err(SkillError::Revoked { skill_id: skill_id.to_string(), action: if status == SkillStatus::Revoked { "revoked again" } else { "deprecated or reactivated" } });
        }
        if let Some(actor) = actor {
            Self::check_owner(skill, actor, action)?;
        }
        Ok(SkillEvent::Status {
            skill_id: skill_id.to_string(),
            status,
            reason,
            changed_at_millis: now_millis,
            agent_id: actor.map(|a| a.agent_id.clone()),
            signature,
            caller: caller.map(str::to_string),
        })
    }

    /// Applies a persisted event. `parsed` is the upload's document when the
    /// caller already parsed it; replay passes `None` and parses here.
    /// An event that does not apply (a status change for an unknown skill) is
    /// refused with a reason and leaves the registry unchanged.
    pub fn apply(&mut self, ev: SkillEvent, parsed: Option<SkillDocument>) -> Result<(), UnknownSkill> {
        match ev {
            SkillEvent::Upload { skill_id, version_id, uploaded_at_millis, agent_id, agent_name, agent_owner, source_format, content, signature, caller } => {
                let document = match parsed {
                    Some(d) => d,
                    None => document::parse(source_format, &content, Some(&skill_id)).unwrap_or_else(|_| SkillDocument {
                        schema_version: super::model::CURRENT_SCHEMA_VERSION,
                        name: skill_id.clone(),
                        description: String::new(),
                        tags: Vec::new(),
                        triggers: Vec::new(),
                        warnings: vec!["this version no longer parses; its metadata is unavailable".into()],
                        body: content.clone(),
                    }),
                };
                let uploaded_at = format_rfc3339_millis(uploaded_at_millis);
                let version = |n: u64| SkillVersion {
                    version_id,
                    version_number: n,
                    uploaded_at_millis,
                    uploaded_at: uploaded_at.clone(),
                    uploaded_by_agent_id: agent_id.clone(),
                    uploaded_by_agent_name: agent_name,
                    uploaded_by_agent_owner: agent_owner,
                    uploaded_by_caller: caller.clone(),
                    source_format,
                    content_hash: content_hash(&content),
                    content,
                    signature,
                    document,
                };
                match self.skills.get_mut(&skill_id) {
                    Some(skill) => {
                        let n = skill.versions.len() as u64 + 1;
                        skill.push_version(version(n));
                        skill.updated_at_millis = skill.updated_at_millis.max(uploaded_at_millis);
                        if skill.status == SkillStatus::Deprecated {
                            skill.status = SkillStatus::Active;
                            skill.status_reason = None;
                            skill.status_history.push(StatusChange {
                                status: SkillStatus::Active,
                                reason: Some(format!("reactivated by the upload of version {n}")),
                                changed_at: uploaded_at,
                                changed_by_agent_id: Some(agent_id),
                                changed_by_caller: caller.clone(),
                                signing_key_id: None,
                                status_signature: None,
                                changed_at_millis: uploaded_at_millis,
                            });
                        }
                    }
                    None => {
                        let mut skill = Skill {
                            skill_id: skill_id.clone(),
                            versions: Vec::new(),
                            status: SkillStatus::Active,
                            status_reason: None,
                            status_history: Vec::new(),
                            updated_at_millis: uploaded_at_millis,
                            version_index: Default::default(),
                        };
                        skill.push_version(version(1));
                        self.skills.insert(skill_id, skill);
                    }
                }
                Ok(())
            }
            SkillEvent::Status { skill_id, status, reason, changed_at_millis, agent_id, signature, caller } => {
                let skill = self.skills.get_mut(&skill_id).ok_or_else(|| UnknownSkill { skill_id: skill_id.clone() })?;
                skill.status = status;
                skill.status_reason = reason.clone();
                skill.updated_at_millis = skill.updated_at_millis.max(changed_at_millis);
                skill.status_history.push(StatusChange {
                    status,
                    reason,
                    changed_at: format_rfc3339_millis(changed_at_millis),
                    changed_by_agent_id: agent_id,
                    changed_by_caller: caller,
                    signing_key_id: signature.as_ref().map(|(k, _)| k.clone()),
                    status_signature: signature.map(|(_, s)| s),
                    changed_at_millis,
                });
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::Caller;

    fn actor(id: &str, owner: Option<&str>) -> Actor {
        Actor { agent_id: id.into(), agent_name: id.to_uppercase(), agent_owner: owner.map(Into::into) }
    }

    fn upload(reg: &mut SkillRegistry, id: Option<&str>, a: &Actor, content: &str, n: i64) -> Result<String, SkillError> {
        upload_as(reg, None, id, a, content, n)
    }

    fn upload_as(reg: &mut SkillRegistry, caller: Option<Caller<'_>>, id: Option<&str>, a: &Actor, content: &str, n: i64) -> Result<String, SkillError> {
        let new = NewVersion { skill_id: id, format: SkillFormat::Markdown, content, signature: None, version_id: format!("v{n}"), now_millis: n, caller };
        match reg.prepare_upload(a, new)? {
            SkillWrite::Event(ev, doc) => {
                let sid = ev.skill_id().to_string();
                reg.apply(ev, doc).unwrap();
                Ok(sid)
            }
            SkillWrite::Unchanged { skill_id } => Ok(skill_id),
        }
    }

    #[test]
    fn skill_ids_derive_from_names() {
        assert_eq!(skill_id_from_name("Release  Checklist: v2!").as_deref(), Some("release-checklist-v2"));
        assert_eq!(skill_id_from_name("Überprüfung"), Some("überprüfung".into()));
        assert_eq!(skill_id_from_name("!!!"), None);
    }

    #[test]
    fn versions_number_up_and_owners_are_enforced() {
        let mut reg = SkillRegistry::new();
        let alice = actor("alice", Some("team-a"));
        let sid = upload(&mut reg, None, &alice, "# Deploy Steps\n", 1).unwrap();
        assert_eq!(sid, "deploy-steps");
        upload(&mut reg, None, &actor("alice2", Some("team-a")), "# Deploy Steps\nv2\n", 2).unwrap();
        let e = upload(&mut reg, None, &actor("mallory", Some("team-b")), "# Deploy Steps\nevil\n", 3).unwrap_err();
        assert!(e.to_string().contains("only agents with the same agent_owner as the skill's creator"), "{e}");
        assert!(e.to_string().contains("'team-a'") && e.to_string().contains("'team-b'"), "{e}");
        let s = reg.get("deploy-steps").unwrap();
        assert_eq!(s.versions.iter().map(|v| v.version_number).collect::<Vec<_>>(), vec![1, 2]);

        // No owner: only the creator agent.
        upload(&mut reg, Some("solo"), &actor("bob", None), "# Solo\n", 4).unwrap();
        let e = upload(&mut reg, Some("solo"), &actor("carol", None), "# Solo\n", 5).unwrap_err();
        assert!(e.to_string().contains("has no agent_owner, so only that agent may"), "{e}");
        upload(&mut reg, Some("solo"), &actor("bob", None), "# Solo 2\n", 6).unwrap();
    }

    #[test]
    fn a_skill_created_through_a_token_takes_versions_from_that_token_or_an_admin() {
        let mut reg = SkillRegistry::new();
        let a = actor("a", Some("o"));
        let token = |name, admin| Some(Caller { name, all_chains: true, admin, reads: None });
        upload_as(&mut reg, token("ci", false), Some("s"), &a, "# S\n", 1).unwrap();
        assert_eq!(reg.get("s").unwrap().first().uploaded_by_caller.as_deref(), Some("ci"));
        upload_as(&mut reg, token("ci", false), Some("s"), &a, "# S\n2\n", 2).unwrap();
        let e = upload_as(&mut reg, token("other", false), Some("s"), &a, "# S\n3\n", 3).unwrap_err();
        assert!(e.to_string().contains("created through token 'ci'") && e.to_string().contains("not token 'other'"), "{e}");
        assert!(upload_as(&mut reg, None, Some("s"), &a, "# S\n3\n", 3).unwrap_err().to_string().contains("not a call without a token"));
        upload_as(&mut reg, token("root", true), Some("s"), &a, "# S\n3\n", 3).unwrap();
        // Skills created without a token are not restricted by caller.
        upload(&mut reg, Some("t"), &a, "# T\n", 4).unwrap();
        upload_as(&mut reg, token("anyone", false), Some("t"), &a, "# T\n2\n", 5).unwrap();
    }

    #[test]
    fn a_token_scoped_to_some_chains_creates_skills_but_never_changes_one() {
        let mut reg = SkillRegistry::new();
        let team_b = actor("b", Some("team-b"));
        let scoped = |name| Some(Caller { name, all_chains: false, admin: true, reads: None });
        // Team B's skill, made by a daemon-wide token.
        upload_as(&mut reg, Some(Caller { name: "ops", all_chains: true, admin: true, reads: None }), Some("deploy"), &team_b, "# Deploy\n", 1).unwrap();
        // An admin of one chain, with an agent claiming team B's owner: refused.
        let e = upload_as(&mut reg, scoped("chain-a-admin"), Some("deploy"), &team_b, "# Deploy\nrm -rf /\n", 2).unwrap_err();
        assert!(e.to_string().contains("covers only some chains"), "{e}");
        assert_eq!(reg.get("deploy").unwrap().versions.len(), 1, "nothing written");
        // It may create a new skill, and not give that one a second version either.
        upload_as(&mut reg, scoped("chain-a-admin"), Some("mine"), &team_b, "# Mine\n", 3).unwrap();
        assert!(upload_as(&mut reg, scoped("chain-a-admin"), Some("mine"), &team_b, "# Mine\n2\n", 4).is_err());
        // Repeating the latest version exactly is a retry, not a change.
        upload_as(&mut reg, scoped("chain-a-admin"), Some("mine"), &team_b, "# Mine\n", 5).unwrap();
    }

    #[test]
    fn lifecycle_rules() {
        let mut reg = SkillRegistry::new();
        let a = actor("a", Some("o"));
        upload(&mut reg, Some("s"), &a, "# S\n", 1).unwrap();
        let ev = reg.prepare_status("s", ChangedBy { agent: Some(&a), caller: None }, SkillStatus::Deprecated, Some("old".into()), None, 2).unwrap();
        reg.apply(ev, None).unwrap();
        assert_eq!(reg.get("s").unwrap().status, SkillStatus::Deprecated);
        // A new version reactivates a deprecated skill, and the history says so.
        upload(&mut reg, Some("s"), &a, "# S\nnew\n", 3).unwrap();
        let s = reg.get("s").unwrap();
        assert_eq!(s.status, SkillStatus::Active);
        assert_eq!(s.status_history.len(), 2);
        let ev = reg.prepare_status("s", ChangedBy { agent: Some(&a), caller: None }, SkillStatus::Revoked, Some("leaked".into()), None, 4).unwrap();
        reg.apply(ev, None).unwrap();
        assert!(matches!(reg.prepare_status("s", ChangedBy { agent: Some(&a), caller: None }, SkillStatus::Deprecated, None, None, 5), Err(SkillError::Revoked { .. })));
        assert!(matches!(upload(&mut reg, Some("s"), &a, "# S\n", 6), Err(SkillError::Revoked { .. })));
        assert!(matches!(reg.prepare_status("nope", ChangedBy { agent: Some(&a), caller: None }, SkillStatus::Revoked, None, None, 7), Err(SkillError::NotFound { .. })));
        assert!(reg.apply(SkillEvent::Status { skill_id: "nope".into(), status: SkillStatus::Revoked, reason: None, changed_at_millis: 0, agent_id: Some("a".into()), signature: None, caller: None }, None).is_err());
        assert_eq!(reg.get("s").unwrap().updated_at_millis, 4);
    }
}
