//! BM25F as pure functions over plain statistics.
//!
//! A thought has several fields (content, tags, concepts, agent). For one
//! query term, each field's term frequency is length-normalized against that
//! field's average length, weighted by the field's weight, and summed; the
//! sum goes through BM25's saturation once and is scaled by the term's
//! inverse document frequency (Robertson/Zaragoza, "The Probabilistic
//! Relevance Framework: BM25 and Beyond", §3.5).

/// Term-frequency saturation: how quickly repeated terms stop adding score.
pub const K1: f32 = 1.2;
/// Length normalization strength (0 = none, 1 = full).
pub const B: f32 = 0.75;

/// Robertson–Spärck Jones IDF with the +1 inside the log that keeps it
/// positive for terms in more than half of the documents.
pub fn idf(doc_freq: u32, doc_count: u32) -> f32 {
    let n = doc_count.max(doc_freq) as f32;
    let df = doc_freq as f32;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// `tf` divided by BM25's length normalization for a field of `field_len`
/// terms whose average is `avg_len`.
pub fn normalized_tf(tf: f32, field_len: f32, avg_len: f32) -> f32 {
    if tf <= 0.0 {
        return 0.0;
    }
    let avg = if avg_len > 0.0 { avg_len } else { 1.0 };
    tf / (1.0 - B + B * field_len / avg)
}

/// Saturation of a (weighted, normalized) term frequency, in `[0, K1 + 1)`.
pub fn saturate(tf: f32) -> f32 {
    if tf <= 0.0 {
        0.0
    } else {
        tf * (K1 + 1.0) / (tf + K1)
    }
}

/// The BM25F score of one term in one document: `idf * saturate(sum of weighted normalized tfs)`.
pub fn bm25f(idf: f32, weighted_normalized_tf: f32) -> f32 {
    idf * saturate(weighted_normalized_tf)
}

/// Classic single-field BM25 (BM25F with one field of weight 1).
pub fn bm25(tf: f32, doc_freq: u32, doc_count: u32, doc_len: f32, avg_len: f32) -> f32 {
    bm25f(idf(doc_freq, doc_count), normalized_tf(tf, doc_len, avg_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn constants_are_the_textbook_defaults() {
        assert_eq!(K1, 1.2);
        assert_eq!(B, 0.75);
    }

    #[test]
    fn idf_falls_with_document_frequency_and_stays_positive() {
        assert!(idf(1, 1000) > idf(10, 1000));
        assert!(idf(10, 1000) > idf(900, 1000));
        assert!(idf(1000, 1000) > 0.0);
        assert!(close(idf(1, 1), (1.0f32 + 0.5 / 1.5).ln()));
    }

    #[test]
    fn saturation_is_bounded_and_monotonic() {
        assert_eq!(saturate(0.0), 0.0);
        assert!(close(saturate(1.0), 1.0));
        assert!(saturate(2.0) > saturate(1.0));
        assert!(saturate(1e6) < K1 + 1.0);
    }

    #[test]
    fn longer_fields_score_lower() {
        assert!(close(normalized_tf(1.0, 10.0, 10.0), 1.0));
        assert!(normalized_tf(1.0, 40.0, 10.0) < normalized_tf(1.0, 5.0, 10.0));
        assert!(bm25(1.0, 5, 100, 40.0, 10.0) < bm25(1.0, 5, 100, 10.0, 10.0));
    }
}
