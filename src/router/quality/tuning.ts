// The quality model's hyper-parameters in one place, with the reasons for their values. Constants
// in production; the cross-validation bench (bench/router-quality-methods.ts) varies them.

export const TUNING = {
  /** Most prompt clusters a state holds (predict scans them all per prompt). */
  clusterMax: 64,
  /** Target cluster count for n prompts seen: sqrt(n / perSqrt), at least 1. */
  perSqrt: 8,
  /** Coordinates kept per centroid (state size: clusters x keep x 2 numbers). */
  centroidKeep: 512,
  /** Lloyd iterations per train call. */
  iterations: 6,
  /** A prompt's evidence is shared by its `top` nearest clusters, softmax(similarity / temperature). */
  top: 3,
  temperature: 0.02,
  /**
   * Shrinkage (pseudo-outcomes) of the additive model's terms (additive.ts): how hard a kind of
   * prompt is (alpha) and a cluster within it (gamma); a model's offset (beta, toward its prior),
   * its offset on a kind (kindStrength) and in a cluster (clusterStrength).
   */
  alphaStrength: 20,
  gammaStrength: 5,
  betaStrength: 4,
  kindStrength: 8,
  clusterStrength: 4,
  /**
   * Out-of-distribution gate: a cluster's evidence counts fully for prompts at least as similar to
   * it as its members usually are (mean - 2 sd, sd at least sdMin), fading to nothing `gate` below.
   */
  gate: 0.15,
  sdMin: 0.02,
  /**
   * Pessimism where a model has little evidence of its own: q is lowered by this many times the
   * typical size of a model's deviation on a kind and cluster, scaled by clusterStrength / (evidence
   * + clusterStrength). 0 = plain estimate.
   */
  caution: 1,
  /**
   * The local correction (exemplars.ts): prompts kept (a uniform sample past that), coordinates kept
   * per prompt, evidence below which a stored prompt leaves; neighbours per prediction and the
   * shrinkage of a model's mean residual over them (pseudo-outcomes of similarity 1).
   * Cross-validated on held-out prompts: k 80 over 40 and 160, strength 16-32 over 4 and 64.
   */
  exemplars: 2048,
  /**
   * A prompt past the sample's bound gives its outcomes to the stored prompt most like it when at
   * least this alike (IDF-weighted cosine); above 1: dropped, as before.
   */
  mergeSimilarity: 0,
  exemplarCoords: 256,
  exemplarMinWeight: 0.01,
  /**
   * Models a stored prompt keeps (the heaviest): bounds the sample at exemplars x exemplarModels
   * entries however many models traffic reaches. 64: more than the models a prompt kind is
   * usually routed to, so it binds only on very long histories spread over many models.
   */
  exemplarModels: 64,
  neighbours: 80,
  localStrength: 16,
  /**
   * Features in more than this share of the stored prompts get no postings in the similarity index
   * (they still count in every norm): after IDF they weigh little, but their postings made most of
   * predict's work. Cross-validated on held-out prompts (15 folds, paired): 0.2 kept all of the
   * correction's gain (+0.0000 ± 0.0004 AIQ against no limit) at a quarter of its CPU (about 36 us
   * against 164 us a prediction over 300 candidates); 0.1 cost 0.0010 ± 0.0005, 0.05 0.0016 ± 0.0004.
   */
  commonShare: 0.2,
};
