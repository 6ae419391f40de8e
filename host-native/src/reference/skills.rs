//! The reference's skill registry (`mentisdb-skills.bin`), in both of its
//! bincode layouts: every version uploaded again in order, deltas applied
//! and checked against their SHA-256, then the skill's status.

use super::ReferenceError;
use crate::target::Target;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use uuid::Uuid;

/// The reference skill registry file (`mentisdb-skills.bin`: bincode of
/// `{version, skills: map skill_id -> entry}`; each version is the full
/// text or a unified diff against the previous one).
#[derive(Deserialize)]
struct RefSkillRegistry {
    #[allow(dead_code)]
    version: u32,
    skills: BTreeMap<String, RefSkill>,
}

#[derive(Deserialize)]
struct RefSkill {
    skill_id: String,
    #[allow(dead_code)]
    created_at: String,
    #[allow(dead_code)]
    updated_at: String,
    status: RefSkillStatus,
    status_reason: Option<String>,
    versions: Vec<RefSkillVersion>,
}

#[derive(Deserialize, PartialEq, Eq)]
enum RefSkillStatus {
    Active,
    Deprecated,
    Revoked,
}

#[derive(Deserialize, Clone, Copy)]
enum RefSkillFormat {
    Markdown,
    Json,
}

#[derive(Deserialize)]
enum RefSkillContent {
    Full { raw: String },
    Delta { patch: String },
}

#[derive(Deserialize)]
struct RefSkillVersion {
    #[allow(dead_code)]
    version_id: Uuid,
    #[allow(dead_code)]
    version_number: u32,
    #[allow(dead_code)]
    uploaded_at: String,
    uploaded_by_agent_id: String,
    uploaded_by_agent_name: Option<String>,
    #[allow(dead_code)]
    uploaded_by_agent_owner: Option<String>,
    source_format: RefSkillFormat,
    content_hash: String,
    content: RefSkillContent,
    signing_key_id: Option<String>,
    skill_signature: Option<Vec<u8>>,
}

/// A skill version as 0.10.6 and later write it: `schema_version` before `content`.
#[derive(Deserialize)]
struct RefSkillVersion06 {
    version_id: Uuid,
    version_number: u32,
    uploaded_at: String,
    uploaded_by_agent_id: String,
    uploaded_by_agent_name: Option<String>,
    uploaded_by_agent_owner: Option<String>,
    source_format: RefSkillFormat,
    content_hash: String,
    #[allow(dead_code)]
    schema_version: u32,
    content: RefSkillContent,
    signing_key_id: Option<String>,
    skill_signature: Option<Vec<u8>>,
}

#[derive(Deserialize)]
struct RefSkill06 {
    skill_id: String,
    created_at: String,
    updated_at: String,
    status: RefSkillStatus,
    status_reason: Option<String>,
    versions: Vec<RefSkillVersion06>,
}

#[derive(Deserialize)]
struct RefSkillRegistry06 {
    version: u32,
    skills: BTreeMap<String, RefSkill06>,
}

/// The skill registry in either layout: 0.10.6 and later (a `schema_version`
/// in each version) first, then the earlier one (0.9.x to 0.10.5). Bincode
/// is positional, so a file decodes whole in exactly one of them.
fn decode_skill_registry(bytes: &[u8]) -> Result<RefSkillRegistry, bincode::error::DecodeError> {
    let config = bincode::config::standard();
    if let Ok((r, used)) = bincode::serde::decode_from_slice::<RefSkillRegistry06, _>(bytes, config) {
        if used == bytes.len() {
            let skills = r.skills.into_iter().map(|(id, s)| (id, RefSkill {
                skill_id: s.skill_id,
                created_at: s.created_at,
                updated_at: s.updated_at,
                status: s.status,
                status_reason: s.status_reason,
                versions: s.versions.into_iter().map(|v| RefSkillVersion {
                    version_id: v.version_id,
                    version_number: v.version_number,
                    uploaded_at: v.uploaded_at,
                    uploaded_by_agent_id: v.uploaded_by_agent_id,
                    uploaded_by_agent_name: v.uploaded_by_agent_name,
                    uploaded_by_agent_owner: v.uploaded_by_agent_owner,
                    source_format: v.source_format,
                    content_hash: v.content_hash,
                    content: v.content,
                    signing_key_id: v.signing_key_id,
                    skill_signature: v.skill_signature,
                }).collect(),
            })).collect();
            return Ok(RefSkillRegistry { version: r.version, skills });
        }
    }
    let (r, _) = bincode::serde::decode_from_slice::<RefSkillRegistry, _>(bytes, config)?;
    Ok(r)
}

/// What the skill step did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillOutcome {
    /// `(skill_id, versions uploaded)` of each skill added.
    pub imported: Vec<(String, usize)>,
    /// Skill ids the store already had (nothing added).
    pub skipped: Vec<String>,
}

/// Imports the reference skill registry of `dir` (if any): every version's
/// full text (deltas applied, each checked against its stored SHA-256) is
/// uploaded in order by its uploading agent (looked up in the chains just
/// imported), then a deprecated/revoked status and its reason are set. A
/// skill id the store already has is skipped. Version ids and upload times
/// are new (ours are assigned at upload).
pub fn import_reference_skills(db: &Target, dir: &Path, chain_keys: &[String], warnings: &mut Vec<String>) -> Result<SkillOutcome, ReferenceError> {
    let path = dir.join("mentisdb-skills.bin");
    let Ok(bytes) = std::fs::read(&path) else { return Ok(SkillOutcome::default()) };
    let registry = decode_skill_registry(&bytes).map_err(|e| ReferenceError::SkillRegistry(e).in_file(&path))?;
    let mut outcome = SkillOutcome::default();
    for skill in registry.skills.into_values() {
        let exists = db.call("mentisdb_skill_versions", json!({ "skill_id": skill.skill_id })).is_ok();
        if exists {
            outcome.skipped.push(skill.skill_id);
            continue;
        }
        let mut text = String::new();
        let mut uploaded = 0;
        for (n, v) in skill.versions.iter().enumerate() {
            text = match &v.content {
                RefSkillContent::Full { raw } => raw.clone(),
                RefSkillContent::Delta { patch } => {
                    let patch = diffy::Patch::from_str(patch).map_err(|source| ReferenceError::SkillPatch { skill_id: skill.skill_id.clone(), version: n, source })?;
                    diffy::apply(&text, &patch).map_err(|source| ReferenceError::SkillDelta { skill_id: skill.skill_id.clone(), version: n, source })?
                }
            };
            let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()));
            if digest != v.content_hash {
                warnings.push(format!("skill '{}' version {n}: content hashes to {digest}, the registry says {}", skill.skill_id, v.content_hash));
            }
            // The chain whose registry gives the uploader the name the reference recorded, else any that has it.
            let agent_in = |k: &String| db.call("mentisdb_get_agent", json!({ "chain_key": k, "agent_id": v.uploaded_by_agent_id })).ok();
            let named = |k: &&String| agent_in(k).is_some_and(|a| a["agent"]["display_name"].as_str() == v.uploaded_by_agent_name.as_deref());
            let chain = chain_keys.iter().find(named).or_else(|| chain_keys.iter().find(|k| agent_in(k).is_some()));
            let mut args = json!({
                "skill_id": skill.skill_id, "agent_id": v.uploaded_by_agent_id, "content": text,
                "format": match v.source_format { RefSkillFormat::Markdown => "markdown", RefSkillFormat::Json => "json" },
            });
            if let Some(k) = chain {
                args["chain_key"] = json!(k);
            }
            if let (Some(key), Some(sig)) = (&v.signing_key_id, &v.skill_signature) {
                args["signing_key_id"] = json!(key);
                args["skill_signature"] = json!(sig);
            }
            db.call("mentisdb_upload_skill", args).map_err(|source| ReferenceError::SkillUpload { skill_id: skill.skill_id.clone(), version: n, source: Box::new(source) })?;
            uploaded += 1;
        }
        let lifecycle = match skill.status {
            RefSkillStatus::Active => None,
            RefSkillStatus::Deprecated => Some("mentisdb_deprecate_skill"),
            RefSkillStatus::Revoked => Some("mentisdb_revoke_skill"),
        };
        if let Some(tool) = lifecycle {
            let mut args = json!({ "skill_id": skill.skill_id });
            if let Some(r) = &skill.status_reason {
                args["reason"] = json!(r);
            }
            db.call(tool, args).map_err(|source| ReferenceError::SkillStatus { skill_id: skill.skill_id.clone(), tool, source: Box::new(source) })?;
        }
        outcome.imported.push((skill.skill_id, uploaded));
    }
    Ok(outcome)
}
