//! A BERT encoder forward pass (all-MiniLM-L6-v2 shape: 6 layers, 384
//! hidden, 12 heads, 1536 intermediate, exact GELU) over f32 weights read
//! from `model.safetensors`, followed by mean pooling and L2 normalization
//! (the sentence-transformers pipeline of that model).

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
    w: Vec<f32>,
    b: Vec<f32>,
    input: usize,
    output: usize,
}

#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

impl Linear {
    /// `x` is `[rows, input]`; returns `[rows, output]`. Output-major loop:
    /// each weight row is read once and reused from L1 for every input row.
    fn forward(&self, x: &[f32]) -> Vec<f32> {
        let rows = x.len() / self.input;
        let mut y = vec![0.0f32; rows * self.output];
        for o in 0..self.output {
            let w = &self.w[o * self.input..(o + 1) * self.input];
            let b = self.b[o];
            for r in 0..rows {
                y[r * self.output + o] = b + dot(&x[r * self.input..(r + 1) * self.input], w);
            }
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
        let linear = |(shape, w): (Vec<usize>, Vec<f32>), (_, b): (Vec<usize>, Vec<f32>)| Linear { w, b, output: shape[0], input: shape[1] };
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
        let d = self.hidden;
        let n = ids.len().min(self.max_positions);
        let mut h = vec![0.0f32; n * d];
        for (i, id) in ids.iter().take(n).enumerate() {
            let w = &self.word[*id as usize * d..(*id as usize + 1) * d];
            let p = &self.position[i * d..(i + 1) * d];
            for j in 0..d {
                h[i * d + j] = w[j] + p[j] + self.token_type[j];
            }
        }
        self.emb_ln.apply(&mut h);
        let dh = d / self.heads;
        let scale = 1.0 / (dh as f32).sqrt();
        for layer in &self.layers {
            let (q, k, v) = (layer.q.forward(&h), layer.k.forward(&h), layer.v.forward(&h));
            let mut ctx = vec![0.0f32; n * d];
            let mut scores = vec![0.0f32; n];
            for head in 0..self.heads {
                let off = head * dh;
                for i in 0..n {
                    let qi = &q[i * d + off..i * d + off + dh];
                    let mut max = f32::NEG_INFINITY;
                    for j in 0..n {
                        let s = dot(qi, &k[j * d + off..j * d + off + dh]) * scale;
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

    #[test]
    fn dot_handles_remainders() {
        let a: Vec<f32> = (0..11).map(|x| x as f32).collect();
        assert_eq!(dot(&a, &a), (0..11).map(|x| (x * x) as f32).sum::<f32>());
    }
}
