//! The lexical stage: BM25F of every query term in every thought holding
//! it, then phrases (query words next to each other that stand next to each
//! other in a thought's content). Every thought a query term matches
//! becomes a candidate here.

use super::bm25;
use super::candidates::Accumulators;
use super::index::{Field, RankedIndex, TermPair, FIELD_COUNT};
use super::query::QueryWords;

/// What a pair of query words found next to each other counts, relative to one query term.
pub const PHRASE_WEIGHT: f32 = 0.5;

/// Lexical: BM25F of every query term in every thought holding it. Returns
/// each term's IDF (0 for a term the chain lacks).
pub(crate) fn score_terms(index: &RankedIndex, terms: &[(String, String)], avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) -> Vec<f32> {
    let n = index.len() as u32;
    let mut idfs = vec![0.0f32; terms.len()];
    for (bit, (term, _)) in terms.iter().enumerate() {
        let Some(id) = index.term_id(term) else { continue };
        let idf = bm25::idf(index.doc_freq(id), n);
        idfs[bit] = idf;
        let postings = index.postings(id);
        let mut i = 0;
        while i < postings.len() {
            let doc = postings[i].doc();
            let lens = index.field_lens(doc);
            let mut tf = 0.0f32;
            let mut fields = 0u8;
            while i < postings.len() && postings[i].doc() == doc {
                let p = postings[i];
                let field = p.field() as usize;
                tf += Field::ALL[field].weight() * bm25::normalized_tf(f32::from(p.tf()), f32::from(lens[field]), avg[field]);
                fields |= 1 << field;
                i += 1;
            }
            let a = acc.entry(doc);
            a.lexical += bm25::bm25f(idf, tf);
            a.terms |= 1 << bit;
            a.fields |= fields;
            a.names_agent |= fields & (1 << Field::Agent as u8) != 0;
        }
    }
    idfs
}

/// Phrases: two query words next to each other ("video game", "grand
/// opening") that also stand next to each other in a thought's content add
/// `PHRASE_WEIGHT` times BM25 of the pair, as if the pair were one more
/// query term: its IDF from the thoughts holding it, its frequency
/// normalized by the content's length. Only thoughts matching both words
/// can hold the pair, and [`score_terms`] touched every one of them.
pub(crate) fn score_phrases(index: &RankedIndex, words: &QueryWords, avg: &[f32; FIELD_COUNT], acc: &mut Accumulators) {
    let (content, terms) = (Field::Content as usize, &words.terms);
    for &(first, second) in &words.pairs {
        let (Some(a_id), Some(b_id)) = (index.term_id(&terms[first].0), index.term_id(&terms[second].0)) else { continue };
        let both = (1u64 << first) | (1u64 << second);
        let pair = TermPair::new(a_id, b_id);
        let held: Vec<(usize, u32)> = acc.accs.iter().enumerate().filter(|(_, a)| a.terms & both == both).map(|(slot, a)| (slot, index.adjacent_count(a.doc, &pair))).filter(|(_, tf)| *tf > 0).collect();
        let idf = bm25::idf(held.len() as u32, index.len() as u32);
        for (slot, tf) in held {
            let a = &mut acc.accs[slot];
            let len = index.field_lens(a.doc)[content] as f32;
            a.lexical += PHRASE_WEIGHT * bm25::bm25f(idf, bm25::normalized_tf(tf as f32, len, avg[content]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{Chain, NewThought};
    use crate::ranked::query::query_terms;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    /// `(agent, content, tags)` per thought.
    fn chain(items: &[(&str, &str, &[&str])]) -> Chain {
        let mut c = Chain::new("lex", ChainFormat::Binary);
        for (i, (agent, content, tags)) in items.iter().enumerate() {
            let mut n = NewThought::new(agent, ThoughtType::FactLearned, content);
            n.tags = tags.iter().map(|s| s.to_string()).collect();
            let t = c.prepare_append(n, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    #[test]
    fn terms_score_bm25f_and_mark_what_matched_where() {
        let c = chain(&[("ada", "sunset over the lake", &[]), ("bob", "a quiet morning", &["sunset"]), ("cy", "nothing here", &[])]);
        let index = c.ranked_index();
        let terms = query_terms("sunset ada zebra");
        let mut acc = Accumulators::new(index.len());
        let idfs = score_terms(&index, &terms, &index.avg_field_lens(), &mut acc);
        assert_eq!(idfs[2], 0.0, "a term the chain lacks");
        assert!((idfs[0] - bm25::idf(2, 3)).abs() < 1e-6 && (idfs[1] - bm25::idf(1, 3)).abs() < 1e-6);
        assert_eq!(acc.accs.iter().map(|a| a.doc).collect::<Vec<_>>(), vec![0, 1], "touched in posting order, term by term");
        let (ada, bob) = (acc.get(0).unwrap(), acc.get(1).unwrap());
        assert_eq!((ada.terms, bob.terms), (0b011, 0b001));
        assert_eq!(ada.fields, (1 << Field::Content as u8) | (1 << Field::Agent as u8));
        assert_eq!(bob.fields, 1 << Field::Tags as u8);
        assert!(ada.names_agent && !bob.names_agent);
        assert!(acc.get(2).is_none(), "no query term: not a candidate");
    }

    #[test]
    fn a_phrase_adds_half_a_term_where_the_words_stand_in_order() {
        let c = chain(&[("ada", "video game night", &[]), ("bob", "game video night", &[]), ("cy", "video only", &[])]);
        let index = c.ranked_index();
        let words = QueryWords::of("Which video game?");
        let avg = index.avg_field_lens();
        let mut acc = Accumulators::new(index.len());
        score_terms(&index, &words.terms, &avg, &mut acc);
        let before: Vec<f32> = (0..3).map(|d| acc.get(d).unwrap().lexical).collect();
        score_phrases(&index, &words, &avg, &mut acc);
        let gained: Vec<f32> = (0..3).map(|d| acc.get(d).unwrap().lexical - before[d as usize]).collect();
        let len = index.field_lens(0)[Field::Content as usize] as f32;
        let expected = PHRASE_WEIGHT * bm25::bm25f(bm25::idf(1, 3), bm25::normalized_tf(1.0, len, avg[Field::Content as usize]));
        assert!((gained[0] - expected).abs() < 1e-6, "{gained:?}");
        assert_eq!(&gained[1..], &[0.0, 0.0], "reversed, or one word only: no phrase");
    }
}
