// Thought types and roles as MentisDB names them, and the coloured badge a
// thought type is shown with everywhere (its colour comes from types.css by
// `data-type`; the name is always written, the colour only helps).

import { h } from "./dom.js";

export const THOUGHT_TYPES = ["PreferenceUpdate", "UserTrait", "RelationshipUpdate", "Finding", "Insight", "FactLearned", "PatternDetected",
  "Hypothesis", "Mistake", "Correction", "AssumptionInvalidated", "Constraint", "Plan", "Subgoal", "Decision", "StrategyShift", "Wonder",
  "Question", "Idea", "Experiment", "ActionTaken", "TaskComplete", "Checkpoint", "StateSnapshot", "Handoff", "Summary", "Surprise",
  "LessonLearned", "Reframe", "Goal", "LLMExtracted"];
export const ROLES = ["Memory", "WorkingMemory", "Summary", "Compression", "Checkpoint", "Handoff", "Audit", "Retrospective"];

/** `<span class="type type-badge" data-type="Decision">Decision</span>`. */
export function typeBadge(type, extra = {}) {
  return h("span", { class: "type type-badge", "data-type": type, ...extra }, type);
}
