//! Replies of the skill tools.

use crate::skills::model::{Skill, SkillVersion, StatusChange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `skill` summary of list, search, upload, deprecate and revoke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillSummary {
    /// The skill's id.
    pub skill_id: String,
    /// Name of the latest version's document.
    pub name: String,
    /// Description of the latest version's document.
    pub description: String,
    /// `active`, `deprecated` or `revoked`.
    pub status: String,
    /// Why the status was last changed, when a reason was given.
    pub status_reason: Option<String>,
    /// Skill document schema version.
    pub schema_version: u32,
    /// Tags of the latest version.
    pub tags: Vec<String>,
    /// When to use the skill (latest version).
    pub triggers: Vec<String>,
    /// Warnings written into the skill by its author.
    pub warnings: Vec<String>,
    /// Id of the newest version.
    pub latest_version_id: String,
    /// Number of versions.
    pub version_count: u64,
    /// RFC 3339 upload time of the first version.
    pub created_at: String,
    /// RFC 3339 time of the last upload or status change.
    pub updated_at: String,
    /// RFC 3339 upload time of the newest version.
    pub latest_uploaded_at: String,
    /// Uploader of the newest version.
    pub latest_uploaded_by_agent_id: String,
    /// Uploader's display name.
    pub latest_uploaded_by_agent_name: String,
    /// Uploader's owner label.
    pub latest_uploaded_by_agent_owner: Option<String>,
    /// `markdown` or `json`.
    pub latest_source_format: String,
}

impl From<&Skill> for SkillSummary {
    fn from(skill: &Skill) -> Self {
        let latest = skill.latest();
        let doc = &latest.document;
        SkillSummary {
            skill_id: skill.skill_id.clone(),
            name: doc.name.clone(),
            description: doc.description.clone(),
            status: skill.status.as_str().to_string(),
            status_reason: skill.status_reason.clone(),
            schema_version: doc.schema_version,
            tags: doc.tags.clone(),
            triggers: doc.triggers.clone(),
            warnings: doc.warnings.clone(),
            latest_version_id: latest.version_id.clone(),
            version_count: skill.versions.len() as u64,
            created_at: skill.first().uploaded_at.clone(),
            updated_at: crate::timestamp::format_rfc3339_millis(skill.updated_at_millis),
            latest_uploaded_at: latest.uploaded_at.clone(),
            latest_uploaded_by_agent_id: latest.uploaded_by_agent_id.clone(),
            latest_uploaded_by_agent_name: latest.uploaded_by_agent_name.clone(),
            latest_uploaded_by_agent_owner: latest.uploaded_by_agent_owner.clone(),
            latest_source_format: latest.source_format.as_str().to_string(),
        }
    }
}

/// `mentisdb_list_skills` and `mentisdb_search_skill`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillListReply {
    /// The skills, as summaries.
    pub skills: Vec<SkillSummary>,
}

/// `mentisdb_upload_skill`, `mentisdb_deprecate_skill`, `mentisdb_revoke_skill`:
/// the skill after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillReply {
    /// The skill's summary.
    pub skill: SkillSummary,
    /// True when `mentisdb_upload_skill` repeated the skill's latest version
    /// (same content, format, uploader and signature): nothing was written.
    /// Always present; false for new versions and status changes.
    pub replay: bool,
}

/// What the skill registry supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillManifest {
    /// Version of the registry (log format and tool semantics).
    pub registry_version: u32,
    /// Skill document schema version written by uploads.
    pub current_schema_version: u32,
    /// The same, under MentisDB 0.10.10's name.
    pub current_skill_schema_version: u32,
    /// Arguments `mentisdb_read_skill` takes (as 0.10.10 lists them).
    pub read_parameters: Vec<String>,
    /// Formats a skill can be uploaded and read in.
    pub supported_formats: Vec<String>,
    /// Fields `text` and the list filters search.
    pub searchable_fields: Vec<String>,
    /// Statuses a skill can have.
    pub lifecycle_statuses: Vec<String>,
}

/// `mentisdb_skill_manifest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillManifestReply {
    /// The manifest.
    pub manifest: SkillManifest,
}

/// `mentisdb_read_skill`: one version's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReadSkillReply {
    /// The skill's id.
    pub skill_id: String,
    /// The version's id.
    pub version_id: String,
    /// The format `content` is in.
    pub format: String,
    /// The format the version was uploaded in.
    pub source_format: String,
    /// Skill document schema version.
    pub schema_version: u32,
    /// The skill text: untrusted, see `safety_warnings`.
    pub content: String,
    /// The skill's lifecycle status.
    pub status: String,
    /// What a reader must know before following the skill.
    pub safety_warnings: Vec<String>,
}

/// One entry of `mentisdb_skill_versions`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SkillVersionEntry<'a> {
    /// The skill the version belongs to.
    pub skill_id: &'a str,
    /// The version's id.
    pub version_id: &'a str,
    /// 1 for the first upload, then 2, 3, ...
    pub version_number: u64,
    /// RFC 3339 upload time.
    pub uploaded_at: &'a str,
    /// Uploading agent.
    pub uploaded_by_agent_id: &'a str,
    /// Uploading agent's display name.
    pub uploaded_by_agent_name: &'a str,
    /// Uploading agent's owner label.
    pub uploaded_by_agent_owner: Option<&'a str>,
    /// The authenticated caller (the daemon token's name) of the upload, if any.
    pub uploaded_by_caller: Option<&'a str>,
    /// `markdown` or `json`.
    pub source_format: &'static str,
    /// SHA-256 of the content bytes, lowercase hex.
    pub content_hash: &'a str,
    /// Skill document schema version.
    pub schema_version: u32,
    /// Key that signed the upload, when it was signed.
    pub signing_key_id: Option<&'a str>,
    /// Ed25519 signature over the content, when it was signed.
    pub skill_signature: Option<&'a [u8]>,
}

impl<'a> SkillVersionEntry<'a> {
    /// Version `v` of skill `skill_id`.
    pub fn of(skill_id: &'a str, v: &'a SkillVersion) -> Self {
        SkillVersionEntry {
            skill_id,
            version_id: &v.version_id,
            version_number: v.version_number,
            uploaded_at: &v.uploaded_at,
            uploaded_by_agent_id: &v.uploaded_by_agent_id,
            uploaded_by_agent_name: &v.uploaded_by_agent_name,
            uploaded_by_agent_owner: v.uploaded_by_agent_owner.as_deref(),
            uploaded_by_caller: v.uploaded_by_caller.as_deref(),
            source_format: v.source_format.as_str(),
            content_hash: &v.content_hash,
            schema_version: v.document.schema_version,
            signing_key_id: v.signature.as_ref().map(|(k, _)| k.as_str()),
            skill_signature: v.signature.as_ref().map(|(_, s)| s.as_slice()),
        }
    }
}

/// `mentisdb_skill_versions`: every version and the status history.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SkillVersionsReply<'a> {
    /// The skill's id.
    pub skill_id: &'a str,
    /// Oldest first.
    pub versions: Vec<SkillVersionEntry<'a>>,
    /// Every lifecycle change, oldest first.
    pub status_history: &'a [StatusChange],
}
