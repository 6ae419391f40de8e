//! The daemon-wide skill registry: versioned, signed, searchable agent skills.
//!
//! A skill is a named set of instructions for agents, uploaded as Markdown
//! (optional frontmatter) or as a JSON skill document. Every upload is a new
//! immutable version (id, number, uploader, source format, SHA-256 content
//! hash, time) that reads back byte-identical; reading in the other format
//! converts. Skills are `active`, `deprecated` or `revoked` (final), and every
//! change is kept.
//!
//! Writes are authenticated against the agent registry of the call's chain:
//! the agent must be active there, must sign uploads when it has an active
//! key, and must share the creator's `agent_owner` to add versions,
//! deprecate or revoke.
//!
//! The registry is one append-only log object ([`crate::naming::SKILLS_LOG`])
//! replayed into memory on open, so it works unchanged over any [`crate::Storage`].
//!
//! Files: [`model`] (types and JSON shapes), [`document`] (Markdown/JSON
//! parsing and conversion), [`safety`] (read warnings and the content scan),
//! [`log`] (event encoding), [`SkillRegistry`] (in-memory index and write rules),
//! [`SkillStore`] (persistence), [`search`], [`authority`] (agent and signature
//! checks), `access` (the [`crate::MentisDb`] methods the nine skill tools of
//! `crate::dispatch` call).

pub mod authority;
pub mod document;
mod document_error;
mod error;
pub mod log;
pub mod model;
mod registry;
pub mod safety;
pub mod search;
mod store;

pub use error::SkillError;
pub use model::{Skill, SkillDocument, SkillFormat, SkillStatus, SkillVersion};
pub use registry::{Actor, ChangedBy, NewVersion, SkillRegistry, SkillWrite, UnknownSkill};
pub use store::{SkillOpenReport, SkillStore};
