(* T9: layer composition.  Each layer kind's radius rule, a head's spread (T8 with the
   query and the keys in the ball of radius r), and the stack by induction over the
   layers ℓ (naturals): N ℓ <= R ℓ for the radius recursion R (ℓ + 1) = a ℓ R ℓ + b ℓ.
   Covers: the radius rules of Linear, Lipschitz, Residual, LayerNorm and Attention (the
     output a convex combination over a list of keys (p_t, ‖x_t‖, ‖V x_t‖)), a head's
     spread 2 σ_q σ_k r²/s, and for every layer ℓ of a stack whose layers obey
     N(ℓ+1) <= a(ℓ) N(ℓ) + b(ℓ), the bounds N(ℓ) <= R(ℓ) and
     D(ℓ) <= 2 σ_q(ℓ) σ_k(ℓ) R(ℓ)²/s(ℓ).
   Leaves out: vectors: the norms are real numbers and the operator-norm, triangle,
     Lipschitz, LayerNorm and ‖Σ p_t v_t‖ <= Σ p_t ‖v_t‖ facts are hypotheses; that a given
     network's layers obey the affine rule is a hypothesis of the stack. *)
From Coq Require Import Reals List Lra Psatz Arith.
From SoftmaxDispersion Require Import Statements Lemmas ListSums T8.
Open Scope R_scope.

(* Each step's arithmetic, on its own few hypotheses (nra is slow in a large context). *)
Lemma weighted_value_le (p xt v r sv : R) :
  p >= 0 -> xt <= r -> v <= xt * sv -> sv >= 0 -> v * p <= r * sv * p.
Proof. intros Hp Hxt Hv Hsv. assert (v <= r * sv) by nra. nra. Qed.

Lemma layer_norm_le (z dim var eps : R) :
  dim >= 1 -> var >= 0 -> eps >= 0 -> eps + var > 0 ->
  z ^ 2 = dim * var / (eps + var) -> z <= sqrt dim.
Proof.
  intros Hdim Hvar Heps Hev Hz.
  assert (Hz2 : z ^ 2 <= dim) by (rewrite Hz; apply frac_le_const; nra).
  destruct (Rle_dec z 0) as [Hneg | Hpos]; [pose proof (sqrt_pos dim); lra |].
  rewrite <- (sqrt_pow2 z) by lra. apply sqrt_le_1_alt. exact Hz2.
Qed.

Lemma spread_le (D n r k q s : R) :
  0 <= n -> n <= r -> k >= 0 -> q >= 0 -> s > 0 ->
  D <= 2 * n ^ 2 * k * q / s -> D <= 2 * r ^ 2 * k * q / s.
Proof.
  intros Hn Hnr Hk Hq Hs HD. apply (Rle_trans _ _ _ HD). apply div_le_div_pos; [lra |].
  assert (0 <= k * q) by nra. assert (n ^ 2 <= r ^ 2) by nra.
  replace (2 * n ^ 2 * k * q) with (2 * (k * q) * n ^ 2) by ring.
  replace (2 * r ^ 2 * k * q) with (2 * (k * q) * r ^ 2) by ring.
  apply Rmult_le_compat_l; lra.
Qed.

Lemma ball_spread_le (D sk sq X y r s : R) :
  sk >= 0 -> sq >= 0 -> 0 <= X -> y >= 0 -> X <= r -> y <= r -> s > 0 ->
  D <= 2 * sk * sq * X * y / s -> D <= 2 * sk * sq * r ^ 2 / s.
Proof.
  intros Hsk Hsq HX Hy HXr Hyr Hs HD. apply (Rle_trans _ _ _ HD).
  apply div_le_div_pos; [lra |].
  assert (0 <= sk * sq) by nra.
  assert (X * y <= r * r) by (apply Rmult_le_compat; lra).
  replace (2 * sk * sq * X * y) with (2 * (sk * sq) * (X * y)) by ring.
  replace (2 * sk * sq * r ^ 2) with (2 * (sk * sq) * (r * r)) by ring.
  apply Rmult_le_compat_l; lra.
Qed.

Theorem T9 : T9_statement.
Proof.
  unfold T9_statement.
  intros beta_norm bias_norm delta dim dot_i dot_j e_max e_min gain inner_radius keys
    lipschitz ln_eps Kxi Kxj Qy Wx att_out fx_f0 gain_z gx ln_out lin_out lip_out res_out
    x xi xj z offset r scale sigma sk sq sv var wv wt X y D K N Q R_ a b s_head ks.
  intros Hlen Hwv Hwt Hr Hx HxR Hsigma Hbias HWx Hlin Hlip Hoff Hfx Hlipout Hgx Hres
    Hdim Hgain Hbeta Hvar Heps Hepsvar Hz Hgz Hln
    Hs Hsq Hsk Hy HQy HQ Hmax HKi Hxi HCSi HCSi' HKxi HxiX Hmin HKj Hxj HCSj HCSj' HKxj HxjX
    Hdelta HyR HXR Hsv Hwt1 Hatt Ha Hb HN HN0 HNstep HRstep HQl HKl Hsl HD
    Hp Hxt Hxtr HVx.
  (* Attention: Σ p_t ‖V x_t‖ <= Σ p_t σ_v r = σ_v r, the weights adding up to 1. *)
  assert (Hvalues : wv <= r * sv * wt).
  { rewrite Hwv, Hwt, <- lsum_scal. apply lsum_le. intros [[p xt] v] Hin. cbn.
    apply (weighted_value_le p xt v r sv); [exact (Hp p xt v Hin) | exact (Hxtr p xt v Hin) |
      exact (HVx p xt v Hin) | exact Hsv]. }
  (* The stack: N ℓ <= R ℓ for every layer ℓ. *)
  assert (Hstack : forall l : nat, N l <= R_ l).
  { induction l as [| l IH]; [exact HN0 |].
    rewrite <- Nat.add_1_r, (HRstep l).
    specialize (HNstep l). specialize (Ha l).
    assert (N l * a l <= R_ l * a l) by (apply Rmult_le_compat_r; lra). lra. }
  (* LayerNorm: ‖z‖² = d Var/(Var + ε) <= d, so ‖z‖ <= sqrt d. *)
  assert (Hzd : z <= sqrt dim) by (apply (layer_norm_le z dim var ln_eps); assumption).
  (* A head whose query and keys lie in the ball of radius r: T8. *)
  assert (Hspread : delta <= 2 * sk * sq * X * y / scale).
  { apply (T8 delta dot_i dot_j e_max e_min Kxi Kxj Qy xi xj scale sk sq X y); assumption. }
  split; [| split; [| split; [| split; [| split; [| split; [| split]]]]]].
  - (* Attention's radius *) rewrite Hwt1, Rmult_1_r in Hvalues. lra.
  - (* Residual's radius *) lra.
  - (* the stack *) exact Hstack.
  - (* Linear's radius *) assert (x * sigma <= r * sigma) by (apply Rmult_le_compat_r; lra). lra.
  - (* Lipschitz's radius *)
    assert (lipschitz * x <= lipschitz * r) by (apply Rmult_le_compat_l; lra). lra.
  - (* LayerNorm's radius *)
    assert (gain * z <= gain * sqrt dim) by (apply Rmult_le_compat_l; lra). lra.
  - (* the head's spread *)
    apply (ball_spread_le delta sk sq X y r scale); [assumption | assumption | lra |
      assumption | assumption | assumption | assumption | exact Hspread].
  - (* every head of the stack *)
    intros l. apply (spread_le (D l) (N l)); [apply Rge_le, HN | apply Hstack | apply HKl |
      apply HQl | apply Hsl | apply HD].
Qed.
