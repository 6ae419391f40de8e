//! A BERT encoder forward pass (all-MiniLM-L6-v2 shape: 6 layers, 384
//! hidden, 12 heads, 1536 intermediate, exact GELU) over f32 weights read
//! from `model.safetensors`, followed by mean pooling and L2 normalization
//! (the sentence-transformers pipeline of that model).
//!
//! The dense layers multiply by weights packed once at load for AVX2 + FMA
//! (`panels.rs`); on CPUs without them, and for attention, products go
//! through `ndarray`'s `general_mat_mul` (`matrixmultiply`'s blocked
//! kernels) — all safe code on this side. A batch of texts
//! shares every dense layer (their tokens are rows of one matrix); each text
//! attends only to its own tokens.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, ShapeBuilder};
#[cfg(target_arch = "x86_64")]
use crate::panels::Panels;
use std::collections::HashMap;

/// Named tensors: name -> (shape, values).
pub type Tensors = HashMap<String, (Vec<usize>, Vec<f32>)>;

/// Reads every F32 tensor of a safetensors file.
pub fn read_safetensors(bytes: &[u8]) -> Result<Tensors, String> {
    let n = u64::from_le_bytes(bytes.get(..8).ok_or("safetensors: too short")?.try_into().expect("8 bytes")) as usize;
    let header: serde_json::Value = serde_json::from_slice(bytes.get(8..8 + n).ok_or("safetensors: bad header length")?).map_err(|e| format!("safetensors header: {e}"))?;
    let data = &bytes[8 + n..];
    let mut out = HashMap::new();
    for (name, info) in header.as_object().ok_or("safetensors: header is not an object")? {
        if name == "__metadata__" || info["dtype"] != "F32" {
            continue;
        }
        let shape: Vec<usize> = info["shape"].as_array().ok_or("shape")?.iter().map(|d| d.as_u64().unwrap_or(0) as usize).collect();
        let off = info["data_offsets"].as_array().ok_or("data_offsets")?;
        let (a, b) = (off[0].as_u64().unwrap_or(0) as usize, off[1].as_u64().unwrap_or(0) as usize);
        let raw = data.get(a..b).ok_or(format!("safetensors: {name} out of bounds"))?;
        let values: Vec<f32> = raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        out.insert(name.clone(), (shape, values));
    }
    Ok(out)
}

/// A dense layer: `y = x W^T + b`, `W` stored `[out, in]` row-major.
#[derive(Debug, Clone)]
struct Linear {
    w: Weights,
    b: Vec<f32>,
    input: usize,
    output: usize,
}

/// A linear layer's weights as its products read them.
#[derive(Debug, Clone)]
enum Weights {
    /// Packed once for AVX2 + FMA (`panels.rs`): no packing per product,
    /// which for the few rows of a query cost as much as the product.
    #[cfg(target_arch = "x86_64")]
    Panels(Panels),
    /// `[out, in]` row-major, multiplied by `matrixmultiply` (other CPUs).
    Rows(Vec<f32>),
}

impl Weights {
    fn new(w: Vec<f32>, output: usize, input: usize) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(panels) = Panels::pack(&w, output, input) {
            return Weights::Panels(panels);
        }
        let _ = (output, input);
        Weights::Rows(w)
    }
}

/// A `rows x cols` view of `data` with the given row and column strides.
fn view(data: &[f32], rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> ArrayView2<'_, f32> {
    ArrayView2::from_shape((rows, cols).strides((row_stride, col_stride)), data).expect("matrix view within its buffer")
}

/// A mutable `rows x cols` view of `data` whose rows are `row_stride` apart.
fn view_mut(data: &mut [f32], rows: usize, cols: usize, row_stride: usize) -> ArrayViewMut2<'_, f32> {
    ArrayViewMut2::from_shape((rows, cols).strides((row_stride, 1)), data).expect("matrix view within its buffer")
}

impl Linear {
    /// `x` is `[rows, input]`; returns `[rows, output]`.
    fn forward(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / self.input;
        let mut y: Vec<f32> = std::iter::repeat_n(&self.b, rows).flatten().copied().collect();
        match &self.w {
            #[cfg(target_arch = "x86_64")]
            Weights::Panels(panels) => panels.multiply_into(x, &mut y),
            Weights::Rows(w) if rows > 0 => {
                let wt = view(w, self.output, self.input, self.input, 1).reversed_axes();
                general_mat_mul(1.0, &view(x, rows, self.input, self.input, 1), &wt, 1.0, &mut view_mut(&mut y, rows, self.output, self.output));
            }
            Weights::Rows(_) => {}
        }
        y
    }
}

#[derive(Debug, Clone)]
struct LayerNorm {
    g: Vec<f32>,
    b: Vec<f32>,
}

const LN_EPS: f32 = 1e-12;

impl LayerNorm {
    fn apply(&self, x: &mut [f32]) {
        let d = self.g.len();
        for row in x.chunks_exact_mut(d) {
            let mean = row.iter().sum::<f32>() / d as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / d as f32;
            let inv = 1.0 / (var + LN_EPS).sqrt();
            for (i, v) in row.iter_mut().enumerate() {
                *v = (*v - mean) * inv * self.g[i] + self.b[i];
            }
        }
    }
}

/// erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
fn erf(x: f32) -> f32 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs() as f64;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0 - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t + 0.254_829_592) * t * (-x * x).exp();
    sign * y as f32
}

fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

#[derive(Debug, Clone)]
struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    attn_out: Linear,
    attn_ln: LayerNorm,
    inter: Linear,
    out: Linear,
    out_ln: LayerNorm,
}

/// The encoder.
#[derive(Debug, Clone)]
pub struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    emb_ln: LayerNorm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
}

impl Bert {
    /// Builds the encoder from safetensors tensors (`heads` attention heads).
    pub fn from_tensors(mut t: Tensors, heads: usize) -> Result<Self, String> {
        let mut take = |name: &str| t.remove(name).ok_or(format!("model.safetensors: missing {name}"));
        let linear = |(shape, w): (Vec<usize>, Vec<f32>), (_, b): (Vec<usize>, Vec<f32>)| Linear { w: Weights::new(w, shape[0], shape[1]), b, output: shape[0], input: shape[1] };
        let (wshape, word) = take("embeddings.word_embeddings.weight")?;
        let hidden = wshape[1];
        let (pshape, position) = take("embeddings.position_embeddings.weight")?;
        let (_, token_type) = take("embeddings.token_type_embeddings.weight")?;
        let emb_ln = LayerNorm { g: take("embeddings.LayerNorm.weight")?.1, b: take("embeddings.LayerNorm.bias")?.1 };
        let mut layers = Vec::new();
        for i in 0.. {
            let p = format!("encoder.layer.{i}.");
            if !t.contains_key(&format!("{p}attention.self.query.weight")) {
                break;
            }
            let mut take = |name: &str| t.remove(&format!("{p}{name}")).ok_or(format!("model.safetensors: missing {p}{name}"));
            layers.push(Layer {
                q: linear(take("attention.self.query.weight")?, take("attention.self.query.bias")?),
                k: linear(take("attention.self.key.weight")?, take("attention.self.key.bias")?),
                v: linear(take("attention.self.value.weight")?, take("attention.self.value.bias")?),
                attn_out: linear(take("attention.output.dense.weight")?, take("attention.output.dense.bias")?),
                attn_ln: LayerNorm { g: take("attention.output.LayerNorm.weight")?.1, b: take("attention.output.LayerNorm.bias")?.1 },
                inter: linear(take("intermediate.dense.weight")?, take("intermediate.dense.bias")?),
                out: linear(take("output.dense.weight")?, take("output.dense.bias")?),
                out_ln: LayerNorm { g: take("output.LayerNorm.weight")?.1, b: take("output.LayerNorm.bias")?.1 },
            });
        }
        if layers.is_empty() || hidden % heads != 0 {
            return Err("model.safetensors: no encoder layers, or hidden size not divisible by heads".into());
        }
        Ok(Bert { word, position, token_type, emb_ln, layers, hidden, heads, max_positions: pshape[0] })
    }

    /// Largest input length.
    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// Mean-pooled, unit-length sentence vector of token `ids`.
    pub fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        self.embed_batch_ids(&[ids]).pop().expect("one vector per text")
    }

    /// Sentence vectors of several token sequences, computed together: the
    /// same vectors as one at a time (up to float rounding), faster.
    pub fn embed_batch_ids(&self, batch: &[&[u32]]) -> Vec<Vec<f32>> {
        let d = self.hidden;
        // (first row, rows) of each text in the stacked matrix.
        let mut spans = Vec::with_capacity(batch.len());
        let mut h: Vec<f32> = Vec::new();
        for ids in batch {
            let n = ids.len().min(self.max_positions);
            spans.push((h.len() / d, n));
            for (i, id) in ids.iter().take(n).enumerate() {
                let w = &self.word[*id as usize * d..(*id as usize + 1) * d];
                let p = &self.position[i * d..(i + 1) * d];
                h.extend((0..d).map(|j| w[j] + p[j] + self.token_type[j]));
            }
        }
        self.emb_ln.apply(&mut h);
        let dh = d / self.heads;
        let scale = 1.0 / (dh as f32).sqrt();
        let longest = spans.iter().map(|s| s.1).max().unwrap_or(0);
        let mut scores = vec![0.0f32; longest * longest];
        for layer in &self.layers {
            let (q, k, v) = (layer.q.forward(&h), layer.k.forward(&h), layer.v.forward(&h));
            let mut ctx = vec![0.0f32; h.len()];
            for &(start, n) in spans.iter().filter(|s| s.1 > 0) {
                for head in 0..self.heads {
                    let at = start * d + head * dh;
                    let len = (n - 1) * d + dh;
                    // scores = scale * Q_h K_h^T, softmax by row; ctx_h = scores V_h.
                    let qh = view(&q[at..at + len], n, dh, d, 1);
                    let kt = view(&k[at..at + len], n, dh, d, 1).reversed_axes();
                    let sc = &mut scores[..n * n];
                    general_mat_mul(scale, &qh, &kt, 0.0, &mut view_mut(sc, n, n, n));
                    for row in sc.chunks_exact_mut(n) {
                        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                        let mut sum = 0.0;
                        for s in row.iter_mut() {
                            *s = (*s - max).exp();
                            sum += *s;
                        }
                        row.iter_mut().for_each(|s| *s /= sum);
                    }
                    let vh = view(&v[at..at + len], n, dh, d, 1);
                    general_mat_mul(1.0, &view(sc, n, n, n, 1), &vh, 0.0, &mut view_mut(&mut ctx[at..at + len], n, dh, d));
                }
            }
            let attn = layer.attn_out.forward(&ctx);
            for (x, a) in h.iter_mut().zip(&attn) {
                *x += a;
            }
            layer.attn_ln.apply(&mut h);
            let mut inter = layer.inter.forward(&h);
            inter.iter_mut().for_each(|x| *x = gelu(*x));
            let out = layer.out.forward(&inter);
            for (x, o) in h.iter_mut().zip(&out) {
                *x += o;
            }
            layer.out_ln.apply(&mut h);
        }
        spans
            .iter()
            .map(|&(start, n)| {
                let mut pooled = vec![0.0f32; d];
                for row in h[start * d..(start + n) * d].chunks_exact(d) {
                    for (p, x) in pooled.iter_mut().zip(row) {
                        *p += x;
                    }
                }
                let norm = pooled.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    pooled.iter_mut().for_each(|x| *x /= norm);
                }
                pooled
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_gelu_match_known_values() {
        assert!((erf(0.5) - 0.520_499_9).abs() < 1e-6);
        assert!((erf(-1.0) + 0.842_700_8).abs() < 1e-6);
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-5);
        assert_eq!(gelu(0.0), 0.0);
    }

    /// `y = x W^T + b`, one dot product at a time.
    impl Weights {
        fn weight(&self, o: usize, k: usize, input: usize) -> f32 {
            match self {
                #[cfg(target_arch = "x86_64")]
                Weights::Panels(panels) => panels.weight(o, k),
                Weights::Rows(w) => w[o * input + k],
            }
        }
    }

    fn naive(l: &Linear, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / l.input;
        let mut y = vec![0.0f32; rows * l.output];
        for r in 0..rows {
            for o in 0..l.output {
                y[r * l.output + o] = l.b[o] + (0..l.input).map(|i| x[r * l.input + i] * l.w.weight(o, i, l.input)).sum::<f32>();
            }
        }
        y
    }

    /// The forward pass written plainly, one text at a time (the shape of
    /// the original implementation), to check the matrix-product version.
    fn reference_embed(bert: &Bert, ids: &[u32]) -> Vec<f32> {
        let d = bert.hidden;
        let n = ids.len().min(bert.max_positions);
        let mut h = vec![0.0f32; n * d];
        for (i, id) in ids.iter().take(n).enumerate() {
            let w = &bert.word[*id as usize * d..(*id as usize + 1) * d];
            let p = &bert.position[i * d..(i + 1) * d];
            for j in 0..d {
                h[i * d + j] = w[j] + p[j] + bert.token_type[j];
            }
        }
        bert.emb_ln.apply(&mut h);
        let dh = d / bert.heads;
        let scale = 1.0 / (dh as f32).sqrt();
        for layer in &bert.layers {
            let (q, k, v) = (naive(&layer.q, &h), naive(&layer.k, &h), naive(&layer.v, &h));
            let mut ctx = vec![0.0f32; n * d];
            let mut scores = vec![0.0f32; n];
            for head in 0..bert.heads {
                let off = head * dh;
                for i in 0..n {
                    let qi = &q[i * d + off..i * d + off + dh];
                    let mut max = f32::NEG_INFINITY;
                    for j in 0..n {
                        let s = qi.iter().zip(&k[j * d + off..j * d + off + dh]).map(|(a, b)| a * b).sum::<f32>() * scale;
                        scores[j] = s;
                        max = max.max(s);
                    }
                    let mut sum = 0.0;
                    for s in scores.iter_mut() {
                        *s = (*s - max).exp();
                        sum += *s;
                    }
                    let out = &mut ctx[i * d + off..i * d + off + dh];
                    for j in 0..n {
                        let p = scores[j] / sum;
                        let vj = &v[j * d + off..j * d + off + dh];
                        for c in 0..dh {
                            out[c] += p * vj[c];
                        }
                    }
                }
            }
            let attn = naive(&layer.attn_out, &ctx);
            for (x, a) in h.iter_mut().zip(&attn) {
                *x += a;
            }
            layer.attn_ln.apply(&mut h);
            let mut inter = naive(&layer.inter, &h);
            inter.iter_mut().for_each(|x| *x = gelu(*x));
            let out = naive(&layer.out, &inter);
            for (x, o) in h.iter_mut().zip(&out) {
                *x += o;
            }
            layer.out_ln.apply(&mut h);
        }
        let mut pooled = vec![0.0f32; d];
        for row in h.chunks_exact(d) {
            for (p, x) in pooled.iter_mut().zip(row) {
                *p += x;
            }
        }
        let norm = pooled.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            pooled.iter_mut().for_each(|x| *x /= norm);
        }
        pooled
    }

    /// Deterministic pseudo-random weights in [-0.5, 0.5).
    fn weights(seed: &mut u64, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect()
    }

    /// A tiny BERT (vocab 20, hidden 8, 2 heads, 2 layers, intermediate 16, 12 positions).
    fn tiny() -> Bert {
        let (v, d, inter, pos) = (20, 8, 16, 12);
        let mut seed = 0x2545_F491_4F6C_DD1D;
        let mut t: Tensors = HashMap::new();
        let mut put = |name: String, shape: Vec<usize>, seed: &mut u64| {
            let n = shape.iter().product();
            t.insert(name, (shape, weights(seed, n)));
        };
        put("embeddings.word_embeddings.weight".into(), vec![v, d], &mut seed);
        put("embeddings.position_embeddings.weight".into(), vec![pos, d], &mut seed);
        put("embeddings.token_type_embeddings.weight".into(), vec![2, d], &mut seed);
        put("embeddings.LayerNorm.weight".into(), vec![d], &mut seed);
        put("embeddings.LayerNorm.bias".into(), vec![d], &mut seed);
        for i in 0..2 {
            let p = format!("encoder.layer.{i}.");
            for (name, shape) in [
                ("attention.self.query", vec![d, d]),
                ("attention.self.key", vec![d, d]),
                ("attention.self.value", vec![d, d]),
                ("attention.output.dense", vec![d, d]),
                ("intermediate.dense", vec![inter, d]),
                ("output.dense", vec![d, inter]),
            ] {
                let out = shape[0];
                put(format!("{p}{name}.weight"), shape, &mut seed);
                put(format!("{p}{name}.bias"), vec![out], &mut seed);
            }
            for ln in ["attention.output.LayerNorm", "output.LayerNorm"] {
                put(format!("{p}{ln}.weight"), vec![d], &mut seed);
                put(format!("{p}{ln}.bias"), vec![d], &mut seed);
            }
        }
        Bert::from_tensors(t, 2).expect("tiny model")
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn linear_matches_plain_dot_products() {
        let mut seed = 7;
        let w = weights(&mut seed, 5 * 11);
        let l = Linear { w: Weights::new(w, 5, 11), b: weights(&mut seed, 5), input: 11, output: 5 };
        let x = weights(&mut seed, 3 * 11);
        assert!(close(&l.forward(&x), &naive(&l, &x)));
        assert!(l.forward(&[]).is_empty());
    }

    #[test]
    fn matrix_forward_pass_matches_the_plain_one_and_batches_agree() {
        let bert = tiny();
        let texts: [&[u32]; 4] = [&[1, 5, 9, 2], &[1, 2], &[1, 3, 3, 7, 11, 19, 4, 2], &[1, 8, 2]];
        let batch = bert.embed_batch_ids(&texts);
        for (ids, got) in texts.iter().zip(&batch) {
            let want = reference_embed(&bert, ids);
            assert!(close(got, &want), "{got:?} vs {want:?}");
            assert!(close(&bert.embed_ids(ids), &want));
            assert!((got.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5, "unit length");
        }
        assert_ne!(batch[0], batch[1]);
    }
}
