//! A linear layer's weights packed once for the vector unit, and the
//! product that reads them in that form.
//!
//! `matrixmultiply` packs both operands on every product. For the few rows
//! of a ranked query (a question and its words: ~30 tokens) packing the
//! weights cost about as much as the product itself (perf on the `speed`
//! example: `pack_avx2` 35% of the time, the kernel 47%). Here the weights
//! are packed at load, in panels of [`PANEL`] outputs
//! (`panel[k * PANEL + j] = W[p * PANEL + j][k]`). A panel of 384 inputs is
//! 24 KiB: it stays in the L1 cache while every input row passes through
//! it, [`ROWS`] rows at a time, so each weight is read from memory once per
//! product and nothing is copied per call.

/// Outputs per panel: two 8-lane vectors.
pub(crate) const PANEL: usize = 16;

/// Input rows multiplied together (8 accumulator vectors with [`PANEL`]).
const ROWS: usize = 4;

/// Eight `f32` lanes (one AVX register).
type Lanes = pulp::f32x8;

/// The weights of `output x input` (row-major, one row per output) in
/// panels, on a CPU with AVX2 and FMA.
#[derive(Debug, Clone)]
pub(crate) struct Panels {
    simd: pulp::x86::V3,
    /// Per panel, per input `k`: its two vectors of weights.
    data: Vec<[Lanes; 2]>,
    input: usize,
    output: usize,
}

impl Panels {
    /// Packs `w` (`output` rows of `input` weights; the last panel padded
    /// with zeros), or `None` on a CPU without AVX2 and FMA (x86-64 before
    /// 2013): the caller keeps the rows for a general product.
    pub(crate) fn pack(w: &[f32], output: usize, input: usize) -> Option<Self> {
        let simd = pulp::x86::V3::try_new()?;
        assert_eq!(w.len(), output * input, "weights of {output} x {input}");
        let mut flat = vec![0.0f32; output.div_ceil(PANEL) * input * PANEL];
        for (o, row) in w.chunks_exact(input.max(1)).enumerate() {
            let (p, j) = (o / PANEL, o % PANEL);
            for (k, &v) in row.iter().enumerate() {
                flat[(p * input + k) * PANEL + j] = v;
            }
        }
        let data = flat.chunks_exact(PANEL).map(|c| pulp::bytemuck::pod_read_unaligned(pulp::bytemuck::cast_slice(c))).collect();
        Some(Panels { simd, data, input, output })
    }

    /// The weight of output `o` for input `k` (the tests' plain products).
    #[cfg(test)]
    pub(crate) fn weight(&self, o: usize, k: usize) -> f32 {
        let lanes: [f32; PANEL] = pulp::bytemuck::cast(self.data[(o / PANEL) * self.input + k]);
        lanes[o % PANEL]
    }

    /// Adds `x W^T` to `y` (`x`: rows of `input`; `y`: the same rows of `output`).
    pub(crate) fn multiply_into(&self, x: &[f32], y: &mut [f32]) {
        pulp::Simd::vectorize(self.simd, Product { panels: self, x, y });
    }
}

/// The product on AVX2 + FMA, as pulp runs it: inlined into a function
/// compiled for those features.
struct Product<'a> {
    panels: &'a Panels,
    x: &'a [f32],
    y: &'a mut [f32],
}

impl pulp::WithSimd for Product<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Product { panels, x, y } = self;
        let simd = panels.simd;
        let (input, output) = (panels.input, panels.output);
        if input == 0 || output == 0 {
            return;
        }
        let rows = x.len() / input;
        assert!(x.len() == rows * input && y.len() == rows * output, "{rows} rows of {input} in, {output} out");
        for (p, panel) in panels.data.chunks_exact(input).enumerate() {
            let first = p * PANEL;
            let width = PANEL.min(output - first);
            for start in (0..rows).step_by(ROWS) {
                let take = ROWS.min(rows - start);
                // Short of ROWS rows, the last one stands in for the missing (its sums are dropped).
                let xs: [&[f32]; ROWS] = std::array::from_fn(|i| &x[(start + i.min(take - 1)) * input..][..input]);
                let zero = simd.splat_f32x8(0.0);
                let mut acc = [[zero; 2]; ROWS];
                for (k, [w0, w1]) in panel.iter().enumerate() {
                    for (a, xr) in acc.iter_mut().zip(&xs) {
                        let v = simd.splat_f32x8(xr[k]);
                        a[0] = simd.mul_add_f32x8(v, *w0, a[0]);
                        a[1] = simd.mul_add_f32x8(v, *w1, a[1]);
                    }
                }
                for (i, a) in acc.iter().enumerate().take(take) {
                    let sums: [f32; PANEL] = pulp::bytemuck::cast(*a);
                    let out = &mut y[(start + i) * output + first..][..width];
                    for (o, s) in out.iter_mut().zip(sums) {
                        *o += s;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain_product(w: &[f32], output: usize, input: usize, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / input;
        let mut y = vec![0.0f32; rows * output];
        for r in 0..rows {
            for o in 0..output {
                y[r * output + o] = (0..input).map(|k| x[r * input + k] * w[o * input + k]).sum();
            }
        }
        y
    }

    #[test]
    fn every_shape_matches_plain_dot_products() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        // Outputs short of, equal to and past a panel; rows short of, equal to and past ROWS.
        for (output, input, rows) in [(5, 11, 3), (16, 8, 4), (37, 19, 9), (48, 384, 1), (33, 7, 0)] {
            let w: Vec<f32> = (0..output * input).map(|_| next()).collect();
            let x: Vec<f32> = (0..rows * input).map(|_| next()).collect();
            let Some(panels) = Panels::pack(&w, output, input) else {
                return; // a CPU without AVX2 and FMA: the general product serves
            };
            assert!((0..output).all(|o| (0..input).all(|k| panels.weight(o, k) == w[o * input + k])));
            let mut y = vec![0.25f32; rows * output];
            panels.multiply_into(&x, &mut y);
            let want: Vec<f32> = plain_product(&w, output, input, &x).iter().map(|v| v + 0.25).collect();
            assert!(y.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-4), "{output}x{input}, {rows} rows: {y:?} vs {want:?}");
        }
    }
}
