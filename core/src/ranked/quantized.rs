//! Unit vectors kept as rows of small integer codes with one scale per
//! row, in one flat buffer, scanned with integer dot products: `i8` codes
//! (a quarter of the memory of `f32` rows) for the words' vectors, `i16`
//! codes (half) for the thoughts', as fine as a dot product summed in `i32`
//! allows at the rows' dimension ([`Code::largest`]: ±4,095 at 128
//! dimensions, ±2,364 at 384, ±1,023 at 2,048).
//!
//! A row holds `round(x_i / s)` for the components `x_i` of the unit vector
//! `x`, with `s = max_i |x_i| / largest`. A query is quantized the same way
//! (scale `t`), and the cosine of the two is `s * t * Σ q_i r_i`. Rounding
//! moves each component by at most half a step, so a cosine moves by small
//! noise that reorders only near-ties: with `i8` codes about 4e-4 (one
//! standard deviation, 256 dimensions), enough to swap a million thoughts'
//! 10th and 11th nearest one time in thirteen (the ranked bench's hashed
//! n-gram vectors kept 0.925 of the exact top 10). Real sentence vectors
//! are closer together than those (a static model's share one direction:
//! their mean has length 0.94), so their near-ties are nearer: compared
//! with every one of 370k of them, codes of ±1,023 kept 0.975 of the exact
//! top 10, codes of ±4,095 0.994 (`vector-recall` in the tests crate).
//!
//! A row that had no vector, or one of another dimension than the first
//! vector seen, has scale 0: it is never similar to anything.

use super::embedding::normalize;

/// An integer code of one component: its type and largest magnitude.
pub trait Code: Copy + Default + Into<i16> + std::fmt::Debug + Send + Sync + 'static {
    /// The largest magnitude the type holds.
    const TYPE_MAX: f32;
    /// `x`, already rounded and within `±largest`, as a code.
    fn from_rounded(x: f32) -> Self;

    /// The code of a row's largest component at `dim` dimensions: as
    /// large as the type holds while a dot product of two rows, summed in
    /// `i32`, cannot overflow (`largest² * dim <= i32::MAX`).
    fn largest(dim: usize) -> f32 {
        let fits = (f64::from(i32::MAX) / dim.max(1) as f64).sqrt().floor();
        Self::TYPE_MAX.min(fits as f32)
    }
}

impl Code for i8 {
    const TYPE_MAX: f32 = 127.0;
    fn from_rounded(x: f32) -> Self {
        x as i8
    }
}

impl Code for i16 {
    const TYPE_MAX: f32 = 32_767.0;
    fn from_rounded(x: f32) -> Self {
        x as i16
    }
}

/// One quantized unit vector per row (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct QuantizedRows<C: Code = i8> {
    dim: usize,
    count: usize,
    codes: Vec<C>,
    /// One per row once any row has a vector (0.0: none); empty before.
    scales: Vec<f32>,
}

/// A query vector quantized for [`QuantizedRows::cosines`] (the same way
/// as a row: an `f32` query measured no better recall and scanned slower).
#[derive(Debug, Clone)]
pub struct QuantizedQuery<C: Code = i8> {
    codes: Vec<C>,
    scale: f32,
}

impl<C: Code> QuantizedQuery<C> {
    /// The query's codes.
    pub fn codes(&self) -> &[C] {
        &self.codes
    }

    /// The query as a unit `f32` vector (within rounding).
    pub fn unit(&self) -> Vec<f32> {
        self.codes.iter().map(|c| wide(*c) as f32 * self.scale).collect()
    }
}

/// `v` (any length) as a unit vector's codes and scale; `None` for a zero vector.
pub(crate) fn quantize<C: Code>(mut v: Vec<f32>) -> Option<(Vec<C>, f32)> {
    normalize(&mut v);
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return None;
    }
    let largest = C::largest(v.len());
    let scale = max / largest;
    Some((v.iter().map(|x| C::from_rounded((x / scale).round().clamp(-largest, largest))).collect(), scale))
}

/// A code as `i32`, for sums of products.
pub(crate) fn wide<C: Code>(c: C) -> i32 {
    i32::from(c.into())
}

/// `Σ a_i b_i` over equally long rows, in sixteen running sums so the
/// compiler can use SIMD lanes.
fn dot<C: Code>(a: &[C], b: &[C]) -> i32 {
    const LANES: usize = 16;
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| wide(*x) * wide(*y)).sum();
    let mut sums = [0i32; LANES];
    for (x, y) in ca.zip(cb) {
        let (x, y): (&[C; LANES], &[C; LANES]) = (x.try_into().expect("exact chunk"), y.try_into().expect("exact chunk"));
        for i in 0..LANES {
            sums[i] += wide(x[i]) * wide(y[i]);
        }
    }
    sums.iter().sum::<i32>() + tail
}

impl<C: Code> FromIterator<Option<Vec<f32>>> for QuantizedRows<C> {
    /// Rows in order, as [`QuantizedRows::push`] appends them.
    fn from_iter<I: IntoIterator<Item = Option<Vec<f32>>>>(rows: I) -> Self {
        let mut q = QuantizedRows::default();
        rows.into_iter().for_each(|r| q.push(r));
        q
    }
}

impl<C: Code> QuantizedRows<C> {
    /// Appends the next row: `vector` scaled to unit length and quantized
    /// (`None`, a zero vector or another dimension: a row never similar to anything).
    pub fn push(&mut self, vector: Option<Vec<f32>>) {
        if let (0, Some(v)) = (self.dim, vector.as_ref().filter(|v| !v.is_empty())) {
            self.dim = v.len();
            self.codes = vec![C::default(); self.count * self.dim];
            self.scales = vec![0.0; self.count];
        }
        self.count += 1;
        if self.dim == 0 {
            // No vector yet (no provider, or it gave none): nothing to keep
            // per row until one comes.
            return;
        }
        match vector.filter(|v| v.len() == self.dim && self.dim > 0).and_then(quantize::<C>) {
            Some((codes, scale)) => {
                self.codes.extend(codes);
                self.scales.push(scale);
            }
            None => {
                self.codes.resize(self.count * self.dim, C::default());
                self.scales.push(0.0);
            }
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The dimension of the rows (0 before the first vector).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether row `id` has a vector.
    pub fn has(&self, id: u32) -> bool {
        self.scales.get(id as usize).is_some_and(|s| *s > 0.0)
    }

    /// How many rows have a vector.
    pub fn present(&self) -> usize {
        self.scales.iter().filter(|s| **s > 0.0).count()
    }

    /// Bytes the rows take (codes and scales).
    pub fn bytes(&self) -> usize {
        self.codes.len() * std::mem::size_of::<C>() + self.scales.len() * std::mem::size_of::<f32>()
    }

    /// Row `id`'s codes; `None` when it has no vector.
    pub fn row_codes(&self, id: u32) -> Option<&[C]> {
        self.scales.get(id as usize).filter(|s| **s > 0.0)?;
        Some(&self.codes[id as usize * self.dim..(id as usize + 1) * self.dim])
    }

    /// Row `id` as a unit `f32` vector (within rounding); `None` when it has none.
    pub fn row(&self, id: u32) -> Option<Vec<f32>> {
        let scale = *self.scales.get(id as usize)?;
        Some(self.row_codes(id)?.iter().map(|c| wide(*c) as f32 * scale).collect())
    }

    /// `query` quantized for [`QuantizedRows::cosines`]; `None` when its
    /// dimension is not the rows' or it is zero.
    pub fn query(&self, query: &[f32]) -> Option<QuantizedQuery<C>> {
        if self.dim == 0 || query.len() != self.dim {
            return None;
        }
        quantize(query.to_vec()).map(|(codes, scale)| QuantizedQuery { codes, scale })
    }

    /// The cosine of `query` to every row that has a vector, in row order.
    pub fn cosines<'a>(&'a self, query: &'a QuantizedQuery<C>) -> impl Iterator<Item = (f32, u32)> + 'a {
        self.codes.chunks_exact(self.dim.max(1)).zip(&self.scales).enumerate().filter(|(_, (_, s))| **s > 0.0).map(move |(id, (row, scale))| (dot(&query.codes, row) as f32 * scale * query.scale, id as u32))
    }

    /// The cosine of `query` to row `id`; `None` when it has no vector.
    pub fn cosine(&self, query: &QuantizedQuery<C>, id: u32) -> Option<f32> {
        let row = self.row_codes(id)?;
        Some(dot(&query.codes, row) as f32 * self.scales[id as usize] * query.scale)
    }

    /// Rows whose cosine to `query` is at least `min`, with that cosine, in row order.
    pub fn similar(&self, query: &[f32], min: f32) -> Vec<(f32, u32)> {
        self.similar_each(&[query], min).pop().unwrap_or_default()
    }

    /// For each of `queries`, [`QuantizedRows::similar`]: in one pass over
    /// the rows, each row widened to `i16` once and compared with every
    /// query there (a query's words are looked up together: widening
    /// `i8` codes costs more than the multiplications).
    pub fn similar_each(&self, queries: &[&[f32]], min: f32) -> Vec<Vec<(f32, u32)>> {
        let wide: Vec<Option<(Vec<i16>, f32)>> = queries.iter().map(|q| self.query(q).map(|q| (q.codes.iter().map(|c| (*c).into()).collect(), q.scale))).collect();
        let mut found = vec![Vec::new(); queries.len()];
        if wide.iter().all(Option::is_none) {
            return found;
        }
        let mut row = vec![0i16; self.dim];
        for (id, (codes, scale)) in self.codes.chunks_exact(self.dim.max(1)).zip(&self.scales).enumerate() {
            if *scale <= 0.0 {
                continue;
            }
            row.iter_mut().zip(codes).for_each(|(w, c)| *w = (*c).into());
            for ((q, q_scale), out) in wide.iter().zip(&mut found).filter_map(|(q, out)| Some((q.as_ref()?, out))) {
                let sim = dot(q, &row) as f32 * scale * q_scale;
                if sim >= min {
                    out.push((sim, id as u32));
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranked::embedding::{cosine, HashedNgramEmbedder};
    use crate::ranked::EmbeddingProvider;

    #[test]
    fn rows_before_the_first_vector_keep_nothing_and_then_read_as_missing() {
        let mut q: QuantizedRows<i16> = QuantizedRows::default();
        for _ in 0..1000 {
            q.push(None);
            q.push(Some(Vec::new()));
        }
        assert_eq!((q.len(), q.dim(), q.bytes()), (2000, 0, 0), "no codes or scales kept without a vector");
        q.push(Some(vec![0.6, 0.8]));
        assert_eq!((q.len(), q.dim(), q.present()), (2001, 2, 1));
        assert_eq!(q.bytes(), 2001 * 2 * 2 + 2001 * 4, "earlier rows filled in as missing");
        assert!(!q.has(0) && q.row(0).is_none() && q.row_codes(1999).is_none());
        let row = q.row(2000).expect("the vector");
        assert!((row[0] - 0.6).abs() < 1e-3 && (row[1] - 0.8).abs() < 1e-3);
        let query = q.query(&[0.6, 0.8]).expect("same dimension");
        assert_eq!(q.cosines(&query).map(|(_, id)| id).collect::<Vec<_>>(), vec![2000]);
    }

    #[test]
    fn rows_are_unit_length_and_missing_ones_are_never_similar() {
        let v: QuantizedRows = [None, Some(vec![3.0, 4.0]), Some(vec![1.0, 0.0, 0.0]), Some(vec![0.0, 2.0]), Some(vec![0.0, 0.0])].into_iter().collect();
        assert_eq!((v.len(), v.dim(), v.present()), (5, 2, 2));
        assert_eq!(v.row(0), None, "a row pushed before the first vector has no vector");
        let r = v.row(1).unwrap();
        assert!((r[0] - 0.6).abs() < 0.005 && (r[1] - 0.8).abs() < 0.005, "{r:?}");
        assert_eq!(v.row(2), None, "another dimension is treated as no vector");
        assert!(!v.has(4), "a zero vector is no vector");
        let sims = v.similar(&[0.0, 1.0], 0.5);
        assert_eq!(sims.iter().map(|s| s.1).collect::<Vec<_>>(), vec![1, 3]);
        assert!((sims[0].0 - 0.8).abs() < 0.01 && (sims[1].0 - 1.0).abs() < 0.01);
        assert!(v.similar(&[1.0, 0.0, 0.0], 0.0).is_empty(), "a query of another dimension matches nothing");
        let each = v.similar_each(&[&[0.0, 1.0], &[1.0, 0.0, 0.0], &[1.0, 0.0]], 0.5);
        assert_eq!(each[0], sims, "one pass for several queries finds what each finds alone");
        assert!(each[1].is_empty());
        assert_eq!(each[2], v.similar(&[1.0, 0.0], 0.5));
        assert_eq!(v.bytes(), 5 * 2 + 5 * 4);
    }

    #[test]
    fn codes_are_as_fine_as_a_dot_product_in_i32_allows() {
        for (dim, largest) in [(1, 32_767.0), (2, 32_767.0), (128, 4_095.0), (384, 2_364.0), (2_048, 1_023.0), (4_096, 724.0)] {
            assert_eq!(<i16 as Code>::largest(dim), largest, "{dim} dimensions");
            let l = f64::from(largest);
            assert!(l * l * dim as f64 <= f64::from(i32::MAX), "{dim}: fits");
            assert!(largest == 32_767.0 || (l + 1.0) * (l + 1.0) * dim as f64 > f64::from(i32::MAX), "{dim}: the largest that fits");
        }
        assert_eq!(<i8 as Code>::largest(384), 127.0);
        // Every component at the largest code: the dot product is at its
        // largest and must not overflow (tests run with overflow checks).
        for dim in [2usize, 128, 384, 2_048] {
            let rows: QuantizedRows<i16> = [Some(vec![1.0; dim])].into_iter().collect();
            let q = rows.query(&vec![1.0; dim]).unwrap();
            let cos = rows.cosine(&q, 0).unwrap();
            assert!((cos - 1.0).abs() < 1e-4, "{dim}: {cos}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever the dimension and the components, a quantized cosine
        /// is the exact one within rounding, and never overflows.
        #[test]
        fn any_dimension_gives_the_exact_cosine_within_rounding(dim in 1usize..3_000, seed in proptest::prelude::any::<u64>(), spread in 0.0f32..4.0) {
            let mut x = seed | 1;
            let mut draw = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // One large shared part (as real vectors have) and a spread of their own.
                1.0 + spread * ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
            };
            let a: Vec<f32> = (0..dim).map(|_| draw()).collect();
            let b: Vec<f32> = (0..dim).map(|_| draw()).collect();
            let rows: QuantizedRows<i16> = [Some(a.clone())].into_iter().collect();
            let got = rows.cosine(&rows.query(&b).unwrap(), 0).unwrap();
            let exact = cosine(&a, &b);
            proptest::prop_assert!((got - exact).abs() < 2e-3, "{dim}: {got} against {exact}");
        }
    }

    #[test]
    fn quantized_cosines_stay_within_a_hundredth_of_the_exact_ones() {
        let e = HashedNgramEmbedder::default();
        let texts: Vec<String> = (0..200).map(|i| format!("thought {i} about painting fences and {} blue boats", i * 7 % 13)).collect();
        let vectors: Vec<Vec<f32>> = texts.iter().map(|t| e.embed(t).unwrap()).collect();
        let rows: QuantizedRows = vectors.iter().cloned().map(Some).collect();
        let query = e.embed("painting a blue boat").unwrap();
        let q = rows.query(&query).unwrap();
        for (sim, id) in rows.cosines(&q) {
            let exact = cosine(&query, &vectors[id as usize]);
            assert!((sim - exact).abs() < 0.01, "row {id}: {sim} vs {exact}");
        }
    }
}
