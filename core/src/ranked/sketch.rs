//! The thoughts' vectors with a sketch of each: [`SKETCH_BITS`] bits, bit
//! `j` telling on which side of a fixed random hyperplane `j` the vector
//! lies (64 bytes a thought). The share of bits two sketches differ in
//! estimates the angle between their vectors (random-hyperplane hashing:
//! `P(bit differs) = angle / π`), so on a large chain the vector stage
//! ([`super::vectors`]) reads every sketch but compares the query exactly
//! only with the thoughts whose sketches are nearest its own.
//!
//! A sentence model's vectors are not spread over the sphere: they share
//! one direction (the static model's have a mean of length 0.94), so the
//! angles between them are small and many planes leave all of them on one
//! side. Each vector is therefore sketched less the chain's centre, the
//! mean of its first [`CENTRE_SAMPLE`] vectors (sketches made before the
//! centre was known are made again then, so all of them always agree:
//! 25 ms once at 384 dimensions on this machine, against 26 us a push); a
//! query likewise. The exact comparison that follows uses the vectors
//! themselves. Measured on real sentence vectors (`vector-recall` in the
//! tests crate, 370k thoughts), a shortlist of one thought in 20 by 512
//! random hyperplanes held 0.986 of the exact top 10 uncentred, 0.994
//! centred (what comparing every thought gives); by the signs of the
//! vector's own 128 components, one in 10 held 0.909.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use super::quantized::{quantize, wide, Code, QuantizedQuery, QuantizedRows};

/// The code type of thought vectors: as fine as `i32` sums allow at the
/// dimension (±4,095 at 128 dimensions, ±2,364 at 384), so the exact
/// comparison of a shortlist keeps the order of near-ties (`quantized.rs`):
/// on 370k real sentence vectors `i8` codes kept 0.856 of the exact top 10,
/// ±1,023 codes 0.969, these 0.986.
pub type ThoughtCode = i16;

/// Bits in a sketch: one random hyperplane each.
pub const SKETCH_BITS: usize = 512;

/// Vectors whose mean is the chain's centre (see the module docs).
pub const CENTRE_SAMPLE: usize = 1_024;

/// One quantized unit row per thought and its sketch, each in one flat
/// buffer (a thought without a vector has an all-zero sketch and is never
/// compared).
#[derive(Debug, Clone, Default)]
pub struct SketchedRows {
    rows: QuantizedRows<ThoughtCode>,
    /// [`SKETCH_BITS`] hyperplanes of the rows' dimension, small integer
    /// components (a fixed pseudo-random sequence: every index draws the
    /// same ones), one copy per dimension shared by every chain
    /// ([`shared_planes`]); empty before the first vector.
    planes: Arc<[i8]>,
    /// [`WORDS`] words per thought once any thought has a vector; empty before.
    bits: Vec<u64>,
    /// The mean of the first [`CENTRE_SAMPLE`] vectors, subtracted before
    /// sketching; `None` until there are that many.
    centre: Option<Box<[f32]>>,
    /// Rows with a vector pushed so far, counted until the centre is taken.
    vectors_seen: usize,
}

/// 64-bit words per sketch.
const WORDS: usize = SKETCH_BITS / 64;

/// [`SKETCH_BITS`] planes of `dim` components from a fixed xorshift
/// sequence, each the sum of three integers drawn evenly from -15..=15
/// (close to a Gaussian: the planes' directions are then spread evenly
/// over the sphere, which the angle estimate needs).
fn planes(dim: usize) -> Vec<i8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut draw = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 32) % 31) as i8 - 15
    };
    (0..SKETCH_BITS * dim).map(|_| draw() + draw() + draw()).collect()
}

/// The planes of `dim` components, made once per dimension in the process
/// and shared (`512 x dim` bytes: 196 KB at 384 dimensions, the same for
/// every chain, so not one copy per chain).
fn shared_planes(dim: usize) -> Arc<[i8]> {
    static BY_DIM: OnceLock<Mutex<BTreeMap<usize, Arc<[i8]>>>> = OnceLock::new();
    let mut by_dim = BY_DIM.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    by_dim.entry(dim).or_insert_with(|| planes(dim).into()).clone()
}

/// The sketch of `codes`: bit `j` set when the row lies above plane `j`.
fn sketch<C: Code>(codes: &[C], planes: &[i8]) -> [u64; WORDS] {
    let mut out = [0u64; WORDS];
    for (j, plane) in planes.chunks_exact(codes.len().max(1)).enumerate() {
        let side: i32 = plane.iter().zip(codes).map(|(p, c)| i32::from(*p) * wide(*c)).sum();
        if side > 0 {
            out[j / 64] |= 1 << (j % 64);
        }
    }
    out
}

impl FromIterator<Option<Vec<f32>>> for SketchedRows {
    /// Rows in order, as [`SketchedRows::push`] appends them.
    fn from_iter<I: IntoIterator<Item = Option<Vec<f32>>>>(rows: I) -> Self {
        let mut s = SketchedRows::default();
        rows.into_iter().for_each(|r| s.push(r));
        s
    }
}

impl SketchedRows {
    /// Appends the next thought's vector ([`QuantizedRows::push`]) and its sketch.
    pub fn push(&mut self, vector: Option<Vec<f32>>) {
        self.rows.push(vector);
        if self.rows.dim() == 0 {
            // No vector yet (no provider): every sketch would be zeros, 64
            // bytes a thought for nothing; they are written when one comes.
            return;
        }
        if self.planes.is_empty() {
            self.planes = shared_planes(self.rows.dim());
        }
        let last = self.rows.len() as u32 - 1;
        // The thoughts before the first vector: all-zero sketches.
        self.bits.resize(last as usize * WORDS, 0);
        if self.centre.is_none() && self.rows.has(last) {
            self.vectors_seen += 1;
        }
        if self.centre.is_none() && self.vectors_seen == CENTRE_SAMPLE {
            self.centre = Some(self.mean_row());
            self.bits.clear();
            (0..last).for_each(|id| self.bits.extend(self.row_sketch(id)));
        }
        self.bits.extend(self.row_sketch(last));
    }

    /// The mean of the rows that have a vector.
    fn mean_row(&self) -> Box<[f32]> {
        let mut mean = vec![0.0f32; self.rows.dim()];
        let mut n = 0usize;
        for row in (0..self.rows.len() as u32).filter_map(|id| self.rows.row(id)) {
            mean.iter_mut().zip(&row).for_each(|(m, x)| *m += x);
            n += 1;
        }
        mean.iter_mut().for_each(|m| *m /= n.max(1) as f32);
        mean.into()
    }

    /// The sketch of row `id` (all zero when it has no vector).
    fn row_sketch(&self, id: u32) -> [u64; WORDS] {
        match (&self.centre, self.rows.row_codes(id)) {
            (_, None) => [0; WORDS],
            (None, Some(codes)) => sketch(codes, &self.planes),
            (Some(_), Some(_)) => self.rows.row(id).map_or([0; WORDS], |v| self.centred_sketch(v)),
        }
    }

    /// The sketch of the unit vector `v` less the centre.
    fn centred_sketch(&self, mut v: Vec<f32>) -> [u64; WORDS] {
        if let Some(centre) = &self.centre {
            v.iter_mut().zip(centre.iter()).for_each(|(x, c)| *x -= c);
        }
        quantize::<ThoughtCode>(v).map_or([0; WORDS], |(codes, _)| sketch(&codes, &self.planes))
    }

    /// The quantized rows.
    pub fn rows(&self) -> &QuantizedRows<ThoughtCode> {
        &self.rows
    }

    /// Bytes the rows, sketches and centre take.
    pub fn bytes(&self) -> usize {
        self.rows.bytes() + self.bits.len() * std::mem::size_of::<u64>() + self.centre.as_ref().map_or(0, |c| c.len() * std::mem::size_of::<f32>())
    }

    /// The sketch of `query` (`None` before the first vector).
    pub fn query_sketch(&self, query: &QuantizedQuery<ThoughtCode>) -> Option<QuerySketch> {
        if self.planes.is_empty() {
            return None;
        }
        Some(QuerySketch(match self.centre {
            Some(_) => self.centred_sketch(query.unit()),
            None => sketch(query.codes(), &self.planes),
        }))
    }

    /// The Hamming distance from `query`'s sketch to every thought's, in
    /// thought order, and how many thoughts are at each distance (index =
    /// distance); empty before the first vector.
    pub fn distances(&self, query: &QuantizedQuery<ThoughtCode>) -> (Vec<u16>, Vec<usize>) {
        match self.query_sketch(query) {
            Some(q) => self.distances_in(&q, 0..self.rows.len() as u32),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// [`SketchedRows::distances`] for the thoughts in `range` only (the
    /// vector stage scans a large chain in such slices, possibly at once).
    pub fn distances_in(&self, query: &QuerySketch, range: Range<u32>) -> (Vec<u16>, Vec<usize>) {
        let mut histogram = vec![0usize; SKETCH_BITS + 1];
        let bits = &self.bits[range.start as usize * WORDS..range.end as usize * WORDS];
        let distances = bits
            .chunks_exact(WORDS)
            .map(|s| {
                let d = s.iter().zip(&query.0).map(|(a, b)| (a ^ b).count_ones()).sum::<u32>() as u16;
                histogram[d as usize] += 1;
                d
            })
            .collect();
        (distances, histogram)
    }
}

/// A query's sketch, to compare with the thoughts' ([`SketchedRows::distances_in`]).
#[derive(Debug, Clone, Copy)]
pub struct QuerySketch([u64; WORDS]);

/// The largest distance that keeps the `count` smallest of the thoughts
/// `histogram` counts (index = distance), with every thought tied with the
/// last of them.
pub fn shortlist_limit(histogram: &[usize], count: usize) -> usize {
    let mut covered = 0;
    for (d, n) in histogram.iter().enumerate() {
        covered += n;
        if covered >= count {
            return d;
        }
    }
    histogram.len()
}

/// The positions whose distance is among the `count` smallest (with every
/// position tied with the largest of them), in position order:
/// `histogram` counts the positions at each distance, as
/// [`SketchedRows::distances`] gives it.
pub fn nearest_by_sketch(distances: &[u16], histogram: &[usize], count: usize) -> Vec<u32> {
    let limit = shortlist_limit(histogram, count);
    distances.iter().enumerate().filter(|(_, d)| (**d as usize) <= limit).map(|(i, _)| i as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketches_tell_the_side_of_each_plane_and_distances_count_differing_sides() {
        let s: SketchedRows = [None, Some(vec![1.0, -1.0, 0.5]), Some(vec![-1.0, 1.0, -0.5]), Some(vec![1.0, -1.0, 0.6])].into_iter().collect();
        assert_eq!(s.bits.len(), 4 * WORDS);
        assert!(s.bits[..WORDS].iter().all(|w| *w == 0), "a thought before the first vector has an all-zero sketch");
        let q = s.rows().query(&[1.0, -1.0, 0.5]).unwrap();
        let (d, histogram) = s.distances(&q);
        assert_eq!(d[1], 0, "the same vector: the same side of every plane");
        assert!(d[2] as usize > SKETCH_BITS * 9 / 10, "the opposite vector: the other side of (almost) every plane, {}", d[2]);
        assert!(d[3] < d[2] && (d[3] as usize) < SKETCH_BITS / 10, "a nearby vector: few planes between them, {}", d[3]);
        assert_eq!(histogram.len(), SKETCH_BITS + 1);
        assert_eq!(histogram.iter().sum::<usize>(), 4);
        assert_eq!(s.bytes(), 4 * 3 * 2 + 4 * 4 + 4 * WORDS * 8);
    }

    #[test]
    fn once_the_first_vectors_are_in_every_sketch_is_of_a_vector_less_their_mean() {
        // Vectors sharing one direction (1, 1, ..., 1) plus a small part of their own.
        let vector = |i: usize| (0..16).map(|j| 1.0 + ((i * 7 + j * 13) % 11) as f32 / 20.0 - 0.25).collect::<Vec<f32>>();
        let mut s = SketchedRows::default();
        for i in 0..CENTRE_SAMPLE - 1 {
            s.push(Some(vector(i)));
        }
        s.push(None);
        assert!(s.centre.is_none(), "no centre before {CENTRE_SAMPLE} vectors");
        assert_eq!(s.bits[..WORDS], sketch(s.rows.row_codes(0).unwrap(), &s.planes), "sketched as they are until then");
        s.push(Some(vector(CENTRE_SAMPLE)));
        s.push(Some(vector(CENTRE_SAMPLE + 1)));
        let centre = s.centre.clone().expect("the centre, taken at the last sampled vector");
        let sampled: Vec<Vec<f32>> = (0..=CENTRE_SAMPLE as u32).filter_map(|id| s.rows.row(id)).collect();
        assert_eq!(sampled.len(), CENTRE_SAMPLE);
        let mean: Vec<f32> = (0..16).map(|j| sampled.iter().map(|r| r[j]).sum::<f32>() / CENTRE_SAMPLE as f32).collect();
        assert!(centre.iter().zip(&mean).all(|(c, m)| (c - m).abs() < 1e-5), "the mean of the sampled rows: {centre:?} {mean:?}");
        assert!(centre.iter().all(|c| (*c - 0.25).abs() < 0.01), "their shared direction, as a unit vector's share: {centre:?}");
        let centred = |id: u32| {
            let v: Vec<f32> = s.rows.row(id).unwrap().iter().zip(centre.iter()).map(|(x, c)| x - c).collect();
            sketch(&quantize::<ThoughtCode>(v).unwrap().0, &s.planes)
        };
        assert_eq!(s.bits.len(), (CENTRE_SAMPLE + 2) * WORDS);
        for id in [0u32, 500, CENTRE_SAMPLE as u32 + 1] {
            assert_eq!(s.bits[id as usize * WORDS..(id as usize + 1) * WORDS], centred(id), "thought {id}, sketched before or after the centre");
        }
        assert!(s.bits[(CENTRE_SAMPLE - 1) * WORDS..CENTRE_SAMPLE * WORDS].iter().all(|w| *w == 0), "no vector, no sketch");
        // A query is sketched less the centre too: the same vector, the same sketch.
        let (d, _) = s.distances(&s.rows().query(&vector(500)).unwrap());
        assert!(d[500] <= 2, "{}", d[500]);
        assert_eq!(s.bytes(), s.rows.bytes() + s.bits.len() * 8 + 16 * 4);
    }

    #[test]
    fn the_share_of_differing_bits_estimates_the_angle() {
        // Two unit vectors 60 degrees apart in 64 dimensions: a third of the bits differ.
        let mut a = vec![0.0f32; 64];
        let mut b = vec![0.0f32; 64];
        a[0] = 1.0;
        (b[0], b[1]) = (0.5, 0.75f32.sqrt());
        let s: SketchedRows = [Some(b.clone())].into_iter().collect();
        let (d, _) = s.distances(&s.rows().query(&a).unwrap());
        let share = d[0] as f32 / SKETCH_BITS as f32;
        assert!((share - 1.0 / 3.0).abs() < 0.06, "{share}");
    }

    #[test]
    fn rows_of_one_dimension_share_one_copy_of_the_planes() {
        let a: SketchedRows = [Some(vec![1.0; 24])].into_iter().collect();
        let b: SketchedRows = [Some(vec![-1.0; 24])].into_iter().collect();
        let c: SketchedRows = [Some(vec![1.0; 25])].into_iter().collect();
        assert!(Arc::ptr_eq(&a.planes, &b.planes));
        assert_eq!(c.planes.len(), SKETCH_BITS * 25);
        assert_eq!(*a.planes, *planes(24), "the shared copy is the fixed sequence");
    }

    #[test]
    fn nearest_keeps_the_smallest_distances_with_their_ties() {
        let d = [5u16, 1, 9, 1, 3, 3, 0];
        let mut histogram = vec![0usize; 65];
        d.iter().for_each(|d| histogram[*d as usize] += 1);
        assert_eq!(nearest_by_sketch(&d, &histogram, 3), vec![1, 3, 6]);
        assert_eq!(nearest_by_sketch(&d, &histogram, 4), vec![1, 3, 4, 5, 6], "a tie at the limit is kept");
        assert_eq!(nearest_by_sketch(&d, &histogram, 100).len(), 7);
        assert_eq!(shortlist_limit(&histogram, 4), 3);
    }

    #[test]
    fn a_slice_of_the_distances_is_that_slice_of_all_of_them() {
        let s: SketchedRows = (0..10).map(|i| Some(vec![i as f32 - 4.5, 1.0, (i * i) as f32 / 10.0])).collect();
        let q = s.rows().query(&[1.0, 0.5, -0.2]).unwrap();
        let (all, _) = s.distances(&q);
        let (part, histogram) = s.distances_in(&s.query_sketch(&q).unwrap(), 3..7);
        assert_eq!(part, all[3..7]);
        assert_eq!(histogram.iter().sum::<usize>(), 4);
    }
}
