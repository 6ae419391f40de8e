//! LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on
//! Long-Term Interactive Memory", ICLR 2025) as `longmemeval-bench` reads
//! it: a JSON list of questions, each with its haystack of dated chat
//! sessions (`haystack_session_ids`, `haystack_dates`, `haystack_sessions`:
//! turns of `role` and `content`, the evidence turns marked `has_answer`)
//! and its evidence sessions (`answer_session_ids`). The files
//! `longmemeval_oracle.json`, `longmemeval_s.json` and `longmemeval_m.json`
//! share this shape. Abstention questions (ids ending `_abs`) have no
//! evidence and are left out, as the paper's retrieval evaluation does.

use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// One turn of a session.
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    /// What was said.
    pub content: String,
    /// An evidence turn.
    pub has_answer: bool,
}

/// One dated chat session.
pub struct Session {
    /// Its id (`answer_4be1b6b4_2`).
    pub id: String,
    /// Its date as the file gives it (`2023/04/10 (Mon) 17:50`): sorts in time order.
    pub date: String,
    /// Its turns in order.
    pub turns: Vec<Turn>,
}

/// One question with evidence.
pub struct Question {
    /// Its id.
    pub id: String,
    /// `question_type` (`temporal-reasoning`, `multi-session`, ...).
    pub kind: String,
    /// The question.
    pub text: String,
    /// Its haystack: indexes into [`Dataset::sessions`], in time order.
    pub haystack: Vec<usize>,
    /// The ids of its evidence sessions.
    pub evidence_sessions: Vec<String>,
}

/// Every distinct session of a file and its questions with evidence.
pub struct Dataset {
    /// Each session once (several questions may share one), in time order.
    pub sessions: Vec<Session>,
    /// The questions with evidence.
    pub questions: Vec<Question>,
    /// Abstention questions left out.
    pub abstentions: usize,
}

impl Dataset {
    /// The evidence turns of `q`: `(session id, turn index)` of every
    /// `has_answer` turn of its evidence sessions.
    pub fn evidence_turns(&self, q: &Question) -> Vec<(String, usize)> {
        q.haystack
            .iter()
            .map(|&s| &self.sessions[s])
            .filter(|s| q.evidence_sessions.contains(&s.id))
            .flat_map(|s| s.turns.iter().enumerate().filter(|(_, t)| t.has_answer).map(|(i, _)| (s.id.clone(), i)))
            .collect()
    }
}

/// Reads a LongMemEval file.
pub fn load(path: &Path) -> Result<Dataset, String> {
    let at = |what: String| format!("{}: {what}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| at(e.to_string()))?;
    let all: Vec<Value> = serde_json::from_str(&text).map_err(|e| at(format!("not a JSON list of questions: {e}")))?;
    let mut sessions: Vec<Session> = Vec::new();
    let mut by_id: HashMap<String, (usize, &Value)> = HashMap::new();
    let mut raw_questions = Vec::new();
    let mut abstentions = 0;
    for q in &all {
        let field = |name: &str| q.get(name).ok_or_else(|| at(format!("a question lacks `{name}`")));
        let id = field("question_id")?.as_str().unwrap_or("").to_string();
        let ids = field("haystack_session_ids")?.as_array().ok_or_else(|| at(format!("{id}: haystack_session_ids is not a list")))?;
        let dates = field("haystack_dates")?.as_array().ok_or_else(|| at(format!("{id}: haystack_dates is not a list")))?;
        let lists = field("haystack_sessions")?.as_array().ok_or_else(|| at(format!("{id}: haystack_sessions is not a list")))?;
        if ids.len() != dates.len() || ids.len() != lists.len() {
            return Err(at(format!("{id}: haystack ids, dates and sessions differ in number")));
        }
        let mut haystack = Vec::with_capacity(ids.len());
        for ((sid, date), turns) in ids.iter().zip(dates).zip(lists) {
            let sid = sid.as_str().ok_or_else(|| at(format!("{id}: a session id is not a string")))?;
            let index = match by_id.get(sid) {
                Some(&(_, first)) if first != turns => return Err(at(format!("{id}: session {sid} differs from the one of that id in an earlier question"))),
                Some(&(i, _)) => i,
                None => {
                    let turns_value = turns;
                    let turns = turns.as_array().ok_or_else(|| at(format!("{id}: session {sid} is not a list of turns")))?;
                    let turns = turns
                        .iter()
                        .map(|t| Turn {
                            role: t["role"].as_str().unwrap_or("user").to_string(),
                            content: t["content"].as_str().unwrap_or("").to_string(),
                            has_answer: t["has_answer"].as_bool().unwrap_or(false),
                        })
                        .collect();
                    sessions.push(Session { id: sid.to_string(), date: date.as_str().unwrap_or("").to_string(), turns });
                    by_id.insert(sid.to_string(), (sessions.len() - 1, turns_value));
                    sessions.len() - 1
                }
            };
            haystack.push(index);
        }
        if id.ends_with("_abs") {
            abstentions += 1;
            continue;
        }
        let evidence_sessions = field("answer_session_ids")?.as_array().map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect()).unwrap_or_default();
        let text = match field("question")? {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let kind = q["question_type"].as_str().unwrap_or("?").to_string();
        raw_questions.push(Question { id, kind, text, haystack, evidence_sessions });
    }
    // Time order (the dates sort as text; ties keep the file's order).
    let mut order: Vec<usize> = (0..sessions.len()).collect();
    order.sort_by(|&a, &b| sessions[a].date.cmp(&sessions[b].date));
    let mut new_index = vec![0; sessions.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let mut slots: Vec<Option<Session>> = sessions.into_iter().map(Some).collect();
    let sessions: Vec<Session> = order.iter().map(|&old| slots[old].take().expect("each session once")).collect();
    let mut questions = raw_questions;
    for q in &mut questions {
        q.haystack = q.haystack.iter().map(|&old| new_index[old]).collect();
        q.haystack.sort_unstable();
    }
    let questions: Vec<Question> = questions.into_iter().filter(|q| !q.evidence_sessions.is_empty()).collect();
    Ok(Dataset { sessions, questions, abstentions })
}

/// The cut-offs every figure is given at.
pub const KS: [usize; 2] = [5, 10];

/// The paper's retrieval measures summed over questions.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Questions added.
    pub n: usize,
    /// Per k of [`KS`]: recall_any, recall_all and NDCG summed.
    pub at: [(f64, f64, f64); 2],
}

impl Tally {
    /// Adds one question: `ranked[i]` says whether the item at rank `i + 1`
    /// is evidence; `relevant` is how many evidence items there are.
    /// recall_any@k: some evidence in the top k; recall_all@k: all of it;
    /// NDCG@k with binary relevance (DCG `sum 1 / log2(rank + 1)` over the
    /// evidence in the top k, over the DCG of `min(k, relevant)` evidence
    /// items ranked first).
    pub fn add(&mut self, ranked: &[bool], relevant: usize) {
        self.n += 1;
        for (slot, &k) in self.at.iter_mut().zip(&KS) {
            let found = ranked.iter().take(k).filter(|r| **r).count();
            let dcg: f64 = ranked.iter().take(k).enumerate().filter(|(_, r)| **r).map(|(i, _)| 1.0 / (i as f64 + 2.0).log2()).sum();
            let ideal: f64 = (0..relevant.min(k)).map(|i| 1.0 / (i as f64 + 2.0).log2()).sum();
            slot.0 += f64::from(u8::from(found > 0));
            slot.1 += f64::from(u8::from(found == relevant));
            slot.2 += if ideal > 0.0 { dcg / ideal } else { 0.0 };
        }
    }

    /// One printed line: the means in percent.
    pub fn line(&self, label: &str) -> String {
        let d = self.n.max(1) as f64;
        let mut out = format!("{label:<26} n={:<4}", self.n);
        for (slot, k) in self.at.iter().zip(KS) {
            out += &format!("  any@{k} {:>5.1}% all@{k} {:>5.1}% ndcg@{k} {:>5.1}%", 100.0 * slot.0 / d, 100.0 * slot.1 / d, 100.0 * slot.2 / d);
        }
        out
    }
}

/// Each distinct item in the order of its first appearance (sessions
/// ranked by their best turn).
pub fn first_appearances(items: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut order = Vec::new();
    for item in items {
        if !order.contains(&item) {
            order.push(item);
        }
    }
    order
}

/// One question's outcome as the protocol compares runs: whether some
/// evidence turn is in the top 5 and some evidence session in the top 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Some `has_answer` turn among the first 5 results.
    pub turn_any5: bool,
    /// Some evidence session among the first 10 sessions (ranked by their best turn).
    pub session_any10: bool,
}

/// The protocol's two halves of the questions (A: even positions, B: odd),
/// each as (turns recall_any@5, sessions recall_any@10) in percent.
pub fn halves(outcomes: &[Outcome]) -> [(f64, f64); 2] {
    let half = |parity: usize| {
        let of: Vec<&Outcome> = outcomes.iter().enumerate().filter(|(i, _)| i % 2 == parity).map(|(_, o)| o).collect();
        let pct = |f: &dyn Fn(&Outcome) -> bool| 100.0 * of.iter().filter(|o| f(o)).count() as f64 / of.len().max(1) as f64;
        (pct(&|o| o.turn_any5), pct(&|o| o.session_any10))
    };
    [half(0), half(1)]
}

/// `--save`'s file: a line `<question id> <turn any@5> <session any@10>` (0 or 1) per question.
pub fn save_outcomes(ids: &[String], outcomes: &[Outcome]) -> String {
    ids.iter().zip(outcomes).map(|(id, o)| format!("{id} {} {}\n", u8::from(o.turn_any5), u8::from(o.session_any10))).collect()
}

/// Reads a `--save` file back, for the questions `ids` in their order;
/// refuses one of other questions (another file, or `--limit-questions`).
pub fn load_outcomes(text: &str, ids: &[String]) -> Result<Vec<Outcome>, String> {
    let mut saved = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            [id, t, s] if matches!((*t, *s), ("0" | "1", "0" | "1")) => {
                saved.insert(id.to_string(), Outcome { turn_any5: *t == "1", session_any10: *s == "1" });
            }
            _ => return Err(format!("line {} is not `<question id> <0|1> <0|1>`", n + 1)),
        }
    }
    if saved.len() != ids.len() {
        return Err(format!("it holds {} questions, this run asked {}", saved.len(), ids.len()));
    }
    ids.iter().map(|id| saved.get(id).copied().ok_or_else(|| format!("it has no question {id}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(content: &str, has_answer: bool) -> Value {
        json!({ "role": "user", "content": content, "has_answer": has_answer })
    }

    #[test]
    fn sessions_are_read_once_in_time_order_and_abstentions_are_left_out() {
        let shared = json!([turn("I adopted a cat named Luna", true), { "role": "assistant", "content": "Congratulations!" }]);
        let file = json!([
            {
                "question_id": "q1", "question_type": "single-session-user", "question": "What is my cat's name?",
                "haystack_session_ids": ["later", "cat"], "haystack_dates": ["2023/05/02 (Tue) 10:00", "2023/05/01 (Mon) 09:00"],
                "haystack_sessions": [[turn("I moved to Lisbon", false)], shared],
                "answer_session_ids": ["cat"]
            },
            {
                "question_id": "q2", "question_type": "multi-session", "question": "Where do my cat and I live?",
                "haystack_session_ids": ["cat", "later"], "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 10:00"],
                "haystack_sessions": [shared, [turn("I moved to Lisbon", false)]],
                "answer_session_ids": ["cat", "later"]
            },
            {
                "question_id": "q3_abs", "question_type": "single-session-user", "question": "What is my dog's name?",
                "haystack_session_ids": ["cat"], "haystack_dates": ["2023/05/01 (Mon) 09:00"], "haystack_sessions": [shared],
                "answer_session_ids": []
            }
        ]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lme.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let data = load(&path).unwrap();
        let ids: Vec<&str> = data.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["cat", "later"], "each session once, the earlier first");
        assert_eq!(data.abstentions, 1);
        assert_eq!(data.questions.len(), 2);
        assert_eq!(data.questions[0].haystack, [0, 1], "a haystack lists its sessions in time order");
        assert_eq!(data.evidence_turns(&data.questions[0]), [("cat".to_string(), 0)]);
        assert_eq!(data.evidence_turns(&data.questions[1]), [("cat".to_string(), 0)], "evidence sessions without has_answer turns add none");
        assert_eq!(data.questions[1].evidence_sessions, ["cat", "later"]);
    }

    #[test]
    fn one_session_id_with_two_contents_is_refused() {
        let file = json!([
            { "question_id": "a", "question": "?", "haystack_session_ids": ["s"], "haystack_dates": ["2023/01/01"], "haystack_sessions": [[turn("one", true)]], "answer_session_ids": ["s"] },
            { "question_id": "b", "question": "?", "haystack_session_ids": ["s"], "haystack_dates": ["2023/01/01"], "haystack_sessions": [[turn("two", true)]], "answer_session_ids": ["s"] }
        ]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lme.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let e = load(&path).err().unwrap();
        assert!(e.contains("b: session s differs"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_a_list_of_questions_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, "{}").unwrap();
        let e = load(&path).err().unwrap();
        assert!(e.contains("bad.json") && e.contains("not a JSON list"), "{e}");
    }

    #[test]
    fn recall_any_recall_all_and_ndcg_follow_the_papers_definitions() {
        let mut t = Tally::default();
        // Evidence at ranks 2 and 7 of 2 evidence items.
        let ranked = [false, true, false, false, false, false, true];
        t.add(&ranked, 2);
        let (any5, all5, ndcg5) = t.at[0];
        let (any10, all10, ndcg10) = t.at[1];
        assert_eq!((any5, all5, any10, all10), (1.0, 0.0, 1.0, 1.0));
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((ndcg5 - (1.0 / 3f64.log2()) / ideal).abs() < 1e-12);
        assert!((ndcg10 - (1.0 / 3f64.log2() + 1.0 / 8f64.log2()) / ideal).abs() < 1e-12);
        t.add(&[false; 10], 1);
        assert_eq!(t.n, 2);
        assert_eq!(t.at[1].0, 1.0, "a question with no evidence found adds nothing");
    }

    #[test]
    fn halves_split_by_position_and_a_saved_run_reads_back_for_the_same_questions() {
        let o = |t: bool, s: bool| Outcome { turn_any5: t, session_any10: s };
        let outcomes = [o(true, true), o(false, true), o(true, false), o(false, false)];
        assert_eq!(halves(&outcomes), [(100.0, 50.0), (0.0, 50.0)]);
        let ids: Vec<String> = ["q1", "q2", "q3", "q4"].map(String::from).to_vec();
        let text = save_outcomes(&ids, &outcomes);
        assert_eq!(text.lines().next(), Some("q1 1 1"));
        assert_eq!(load_outcomes(&text, &ids).unwrap(), outcomes);
        let mut reordered = ids.clone();
        reordered.swap(0, 1);
        assert_eq!(load_outcomes(&text, &reordered).unwrap()[0], outcomes[1], "matched by id, not by line");
        assert!(load_outcomes(&text, &ids[..3]).unwrap_err().contains("holds 4 questions, this run asked 3"));
        assert!(load_outcomes("q1 1\n", &ids[..1]).unwrap_err().contains("line 1"));
    }

    #[test]
    fn sessions_rank_by_their_first_turn() {
        assert_eq!(first_appearances([3, 1, 3, 2, 1].into_iter()), [3, 1, 2]);
    }
}
