//! The BERT uncased WordPiece tokenizer, as `tokenizer.json` describes it:
//! clean text, lower-case, split on whitespace and punctuation (CJK
//! characters stand alone), then greedy longest-match WordPiece with the
//! `##` continuation prefix. Accents are not stripped (no Unicode
//! decomposition tables here); accented words fall back to WordPiece.

use std::collections::HashMap;

/// Longest word WordPiece tries; longer words become `[UNK]`.
const MAX_WORD_CHARS: usize = 100;

/// Vocabulary and special token ids.
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    pub cls: u32,
    pub sep: u32,
    pub unk: u32,
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_alphanumeric() && !c.is_whitespace() && !c.is_control() && !c.is_ascii())
}

impl WordPiece {
    /// Reads the vocabulary from a Hugging Face `tokenizer.json`.
    pub fn from_tokenizer_json(text: &str) -> Result<Self, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("tokenizer.json: {e}"))?;
        let vocab_obj = v["model"]["vocab"].as_object().ok_or("tokenizer.json: no model.vocab")?;
        let vocab: HashMap<String, u32> = vocab_obj.iter().filter_map(|(k, id)| id.as_u64().map(|i| (k.clone(), i as u32))).collect();
        let id = |t: &str| vocab.get(t).copied().ok_or(format!("tokenizer.json: no {t} token"));
        Ok(WordPiece { cls: id("[CLS]")?, sep: id("[SEP]")?, unk: id("[UNK]")?, vocab })
    }

    /// Reads a vocabulary given as one token per line, the line's index
    /// being the token's id (BERT's `vocab.txt`). `[UNK]` is required;
    /// `[CLS]` and `[SEP]`, when absent, stand for `[UNK]`'s id.
    pub fn from_vocab_list(text: &str) -> Result<Self, String> {
        let vocab: HashMap<String, u32> = text.split('\n').enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        let unk = *vocab.get("[UNK]").ok_or("vocabulary: no [UNK] token")?;
        let id = |t: &str| vocab.get(t).copied().unwrap_or(unk);
        Ok(WordPiece { cls: id("[CLS]"), sep: id("[SEP]"), unk, vocab })
    }

    /// Number of tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.vocab.len()
    }

    /// Whether the vocabulary is empty (never, once loaded).
    pub fn is_empty(&self) -> bool {
        self.vocab.is_empty()
    }

    /// The tokens ordered by id (`None` for an id no token has).
    pub fn tokens_by_id(&self) -> Vec<Option<&str>> {
        let n = self.vocab.values().max().map_or(0, |m| *m as usize + 1);
        let mut out = vec![None; n];
        for (t, id) in &self.vocab {
            out[*id as usize] = Some(t.as_str());
        }
        out
    }

    /// The id of one token, if the vocabulary has it.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    /// WordPiece ids of `text` without `[CLS]`/`[SEP]` and untruncated.
    pub fn pieces(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for w in Self::basic_tokens(text) {
            self.word_ids(&w, &mut ids);
        }
        ids
    }

    /// Basic tokenization: the words and punctuation marks of `text`.
    pub fn basic_tokens(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for c in text.chars() {
            if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) {
                continue;
            }
            if c.is_whitespace() {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            } else if is_punct(c) || is_cjk(c) {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                out.push(c.to_lowercase().collect());
            } else {
                cur.extend(c.to_lowercase());
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// WordPiece ids of one word.
    fn word_ids(&self, word: &str, out: &mut Vec<u32>) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                let mut s: String = chars[start..end].iter().collect();
                if start > 0 {
                    s.insert_str(0, "##");
                }
                if let Some(id) = self.vocab.get(&s) {
                    found = Some(*id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    pieces.push(id);
                    start = end;
                }
                None => {
                    out.push(self.unk);
                    return;
                }
            }
        }
        out.extend(pieces);
    }

    /// `[CLS] tokens [SEP]`, truncated to `max_len` ids in all.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        for w in Self::basic_tokens(text) {
            self.word_ids(&w, &mut ids);
            if ids.len() >= max_len - 1 {
                ids.truncate(max_len - 1);
                break;
            }
        }
        ids.push(self.sep);
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_tokens_split_punctuation_and_lowercase() {
        assert_eq!(WordPiece::basic_tokens("Hey Mel! It's 1:56 pm."), vec!["hey", "mel", "!", "it", "'", "s", "1", ":", "56", "pm", "."]);
    }

    #[test]
    fn wordpiece_is_greedy_longest_match() {
        let json = r###"{"model":{"vocab":{"[CLS]":1,"[SEP]":2,"[UNK]":3,"un":4,"##aff":5,"##able":6,"aff":7}}}"###;
        let wp = WordPiece::from_tokenizer_json(json).unwrap();
        assert_eq!(wp.encode("unaffable", 16), vec![1, 4, 5, 6, 2]);
        assert_eq!(wp.encode("xyz unaffable", 16), vec![1, 3, 4, 5, 6, 2]);
        assert_eq!(wp.encode("unaffable unaffable", 4), vec![1, 4, 5, 2]);
        assert_eq!(wp.pieces("xyz unaffable"), vec![3, 4, 5, 6]);
    }

    #[test]
    fn a_vocabulary_list_numbers_tokens_by_line() {
        let wp = WordPiece::from_vocab_list("[PAD]\n[UNK]\nun\n##aff\n##able").unwrap();
        assert_eq!((wp.unk, wp.cls, wp.len()), (1, 1, 5));
        assert_eq!(wp.pieces("Unaffable!"), vec![2, 3, 4, 1]);
        assert_eq!(wp.tokens_by_id()[3], Some("##aff"));
        assert!(WordPiece::from_vocab_list("a\nb").is_err());
    }
}
