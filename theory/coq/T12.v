(* T12 in Flocq: the rounding error of the max-shifted softmax
     p_hat = fl(fl(exp(fl(e_i − e_max))) / fl(Σ))
   in any binary format with round to nearest, for any summation tree, with the
   accuracy of exp a hypothesis.  The statements (Statements.v) are printed from the
   sympy formulas; this proof is hand-written.  No axiom.
   Covers: every coefficient computed in a binary format with round to nearest (any
     precision > 1, any emin; binary64 and binary32 as instances) by four formulations —
     max-shift then divide, the reciprocal of the sum, the exp of the log-softmax, and the
     log-sum-exp first — lies within the rigorous bound printed from the theory, for any
     summation tree (γ of n − 1, or of the tree's depth), with the computed exp's (and
     log's) accuracy a stated hypothesis and underflow in absolute terms.
   Leaves out: overflow (Flocq's format has no largest float), the log-add-exp fold, the
     log-softmax values themselves, 16-bit formats accumulated in float32, fused
     multiply-adds; the sympy claim's first-order analysis is checked to agree with the
     bounds to first order in Python, not in Coq. *)
From Coq Require Import Reals List Lra Psatz Lia Permutation.
From Flocq Require Import Core.
From SoftmaxDispersion Require Import Statements T12_Reals T12_Rounding.
Open Scope R_scope.

(* -- one term: the rounded argument and the computed exp ---------------------------- *)

Lemma t12_term (prec emin : Z) (choice : Z -> bool) (exp_fl : R -> R) (exp_rel exp_abs m e : R) :
  (1 < prec)%Z -> is_float prec emin e -> is_float prec emin m -> e <= m ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel < 1 ->
  let u := bpow radix2 (- prec) in
  let y := exp_fl (fl prec emin choice (e - m)) in
  is_float prec emin y /\ 0 <= y /\
  (1 - exp_rel) * (exp (e - m) * exp (- (u * (m - e)))) - exp_abs <= y /\
  y <= (1 + exp_rel) * (exp (e - m) * exp (u * (m - e))) + exp_abs.
Proof.
  intros Hp He Hm Hle [_ Hexp] Hrel u y.
  destruct (fr_minus_error prec emin choice e m Hp He Hm) as (d & Hd & Hx).
  set (x := fl prec emin choice (e - m)) in *.
  assert (Hx0 : x <= 0).
  { unfold x. rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | lra]. }
  assert (Hxf : is_float prec emin x) by (apply fr_is_float_fl, Hp).
  destruct (Hexp x Hxf Hx0) as (Hyf & Hy0 & Hyerr).
  fold y in Hyf, Hy0, Hyerr.
  fold u in Hd. apply Rabs_le_inv in Hd. apply Rabs_le_inv in Hyerr.
  assert (Hme : 0 <= m - e) by lra.
  (* exp x = exp(e − m) exp((e − m) d), and |(e − m) d| <= u (m − e) *)
  assert (Hsplit : exp x = exp (e - m) * exp ((e - m) * d))
    by (rewrite <- exp_plus, Hx; f_equal; ring).
  assert (Hlo : exp (- (u * (m - e))) <= exp ((e - m) * d)) by (apply fs_exp_le; nra).
  assert (Hhi : exp ((e - m) * d) <= exp (u * (m - e))) by (apply fs_exp_le; nra).
  assert (Hem : 0 < exp (e - m)) by apply exp_pos.
  assert (Hxlo : exp (e - m) * exp (- (u * (m - e))) <= exp x)
    by (rewrite Hsplit; apply Rmult_le_compat_l; lra).
  assert (Hxhi : exp x <= exp (e - m) * exp (u * (m - e)))
    by (rewrite Hsplit; apply Rmult_le_compat_l; lra).
  assert (H1 : (1 - exp_rel) * (exp (e - m) * exp (- (u * (m - e)))) <= (1 - exp_rel) * exp x)
    by (apply Rmult_le_compat_l; lra).
  assert (H2 : (1 + exp_rel) * exp x <= (1 + exp_rel) * (exp (e - m) * exp (u * (m - e))))
    by (apply Rmult_le_compat_l; lra).
  repeat split; [exact Hyf | exact Hy0 | lra | lra].
Qed.

(* -- the algebra of the bound ------------------------------------------------------- *)

(* Upper: z = y_i/S <= p K1 + E when y_i <= (1 + ε) p T A + E and S >= T X1/(B G), S >= 1. *)
Lemma t12_upper (p T A B G X1 ue E S yi : R) :
  0 <= p -> 1 <= T -> 0 < A -> 0 < B -> 1 <= G -> 0 < X1 -> 0 <= E -> 0 <= ue -> 1 <= S ->
  T * X1 / (B * G) <= S -> yi <= (1 + ue) * (p * T) * A + E ->
  yi / S <= p * ((1 + ue) * G * A * B / X1) + E.
Proof.
  intros Hp HT HA HB HG HX HE Hue HS HSlo Hy.
  assert (Hlo0 : 0 < T * X1 / (B * G)) by (apply Rdiv_lt_0_compat; nra).
  apply Rle_trans with (((1 + ue) * (p * T) * A) / S + E / S).
  { unfold Rdiv. rewrite <- Rmult_plus_distr_r. apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat; lra | lra]. }
  assert (HE1 : E / S <= E).
  { unfold Rdiv. rewrite <- (Rmult_1_r E) at 2. apply Rmult_le_compat_l; [lra |].
    rewrite <- Rinv_1. apply Rinv_le_contravar; lra. }
  assert (H1 : (1 + ue) * (p * T) * A / S <= (1 + ue) * (p * T) * A / (T * X1 / (B * G))).
  { unfold Rdiv at 1 3. apply Rmult_le_compat_l; [apply Rmult_le_pos; [apply Rmult_le_pos |]; nra |].
    apply Rinv_le_contravar; lra. }
  replace ((1 + ue) * (p * T) * A / (T * X1 / (B * G))) with (p * ((1 + ue) * G * A * B / X1)) in H1
    by (field; repeat split; lra).
  lra.
Qed.

(* Lower: z = y_i/S >= p K2 − E when y_i >= (1 − ε) p T / A − E and 1 <= S <= G T W. *)
Lemma t12_lower (p T A G W ue E S yi : R) :
  0 <= p -> 1 <= T -> 0 < A -> 1 <= G -> 0 < W -> 0 <= E -> ue < 1 -> 1 <= S ->
  S <= G * T * W -> (1 - ue) * (p * T) / A - E <= yi ->
  p * ((1 - ue) / (G * A * W)) - E <= yi / S.
Proof.
  intros Hp HT HA HG HW HE Hue HS HShi Hy.
  assert (HE1 : E / S <= E).
  { unfold Rdiv. rewrite <- (Rmult_1_r E) at 2. apply Rmult_le_compat_l; [lra |].
    rewrite <- Rinv_1. apply Rinv_le_contravar; lra. }
  assert (Hnum : 0 <= (1 - ue) * (p * T) / A)
    by (apply Rmult_le_pos; [apply Rmult_le_pos; [lra | apply Rmult_le_pos; lra] |
                             apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (H1 : (1 - ue) * (p * T) / A / (G * T * W) <= (1 - ue) * (p * T) / A / S).
  { unfold Rdiv at 2 4. apply Rmult_le_compat_l; [exact Hnum |]. apply Rinv_le_contravar; lra. }
  replace ((1 - ue) * (p * T) / A / (G * T * W)) with (p * ((1 - ue) / (G * A * W))) in H1
    by (field; repeat split; nra).
  apply Rle_trans with ((1 - ue) * (p * T) / A / S - E / S); [lra |].
  unfold Rdiv at 1 2 3. rewrite <- Rmult_minus_distr_r.
  apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat; lra | unfold Rdiv in Hy; lra].
Qed.

(* 1 − x <= 1/x − 1 for x > 0. *)
Lemma t12_one_minus (x : R) : 0 < x -> 1 - x <= / x - 1.
Proof.
  intros Hx. apply (Rmult_le_reg_r x); [exact Hx |].
  replace ((/ x - 1) * x) with (1 - x) by (field; lra).
  assert (H := Rle_0_sqr (1 - x)). unfold Rsqr in H. nra.
Qed.

(* The final rounding: relative or absolute, never both. *)
Lemma t12_round (z p K1 K2 R1 E u s eps eta : R) :
  0 <= z -> 0 <= p -> 0 <= K1 -> 0 < K2 -> 0 <= E -> 0 <= u ->
  z <= p * K1 + E -> p * K2 - E <= z ->
  (1 + u) * K1 <= R1 -> (1 + u) / K2 <= R1 ->
  Rabs eps <= u / (1 + u) -> Rabs eta <= / 2 * s -> eps * eta = 0 -> 2 * u * E <= s ->
  Rabs (z * (1 + eps) + eta - p) <= p * (R1 - 1) + E + s / 2.
Proof.
  intros Hz Hp HK1 HK2 HE Hu Hzhi Hzlo HR1 HR2 Heps Heta H0 HuE.
  apply Rabs_le_inv in Heps. apply Rabs_le_inv in Heta.
  assert (Hk : 1 - K2 / (1 + u) <= (1 + u) / K2 - 1).
  { replace ((1 + u) / K2) with (/ (K2 / (1 + u))) by (field; lra).
    apply t12_one_minus. apply Rdiv_lt_0_compat; lra. }
  assert (Hk' : 1 - K2 <= (1 + u) / K2 - 1).
  { assert (1 - K2 <= / K2 - 1) by (apply t12_one_minus; lra).
    assert (/ K2 <= (1 + u) / K2) by (unfold Rdiv; rewrite <- (Rmult_1_l (/ K2)) at 1;
      apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat |]; lra).
    lra. }
  assert (HpK1 : p * K1 <= p * ((1 + u) * K1)) by (apply Rmult_le_compat_l; nra).
  assert (HR1' : p * ((1 + u) * K1) <= p * R1) by (apply Rmult_le_compat_l; lra).
  assert (HR2' : p * ((1 + u) / K2 - 1) <= p * (R1 - 1)) by (apply Rmult_le_compat_l; lra).
  destruct (Rmult_integral _ _ H0) as [-> | ->].
  - (* absolute: z + eta *)
    assert (p * (1 - K2) <= p * ((1 + u) / K2 - 1)) by (apply Rmult_le_compat_l; lra).
    apply Rabs_le; split; nra.
  - (* relative: z (1 + eps), 1/(1 + u) <= 1 + eps <= 1 + u *)
    assert (Hlo : / (1 + u) <= 1 + eps)
      by (replace (/ (1 + u)) with (1 - u / (1 + u)) by (field; lra); lra).
    assert (Hhi : 1 + eps <= 1 + u) by (assert (u / (1 + u) <= u) by (apply fr_u_div, Hu); lra).
    assert (Hz1 : z * (1 + eps) <= z * (1 + u)) by (apply Rmult_le_compat_l; lra).
    assert (Hz2 : z / (1 + u) <= z * (1 + eps))
      by (unfold Rdiv; apply Rmult_le_compat_l; lra).
    assert (Hz3 : (p * K2 - E) / (1 + u) <= z / (1 + u))
      by (unfold Rdiv; apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat |]; lra).
    assert (Hlow : p - (p * K2 - E) / (1 + u) <= p * ((1 + u) / K2 - 1) + E).
    { assert (p * (1 - K2 / (1 + u)) <= p * ((1 + u) / K2 - 1)) by (apply Rmult_le_compat_l; lra).
      assert (E / (1 + u) <= E).
      { unfold Rdiv. rewrite <- (Rmult_1_r E) at 2. apply Rmult_le_compat_l; [lra |].
        rewrite <- Rinv_1. apply Rinv_le_contravar; lra. }
      replace (p - (p * K2 - E) / (1 + u)) with (p * (1 - K2 / (1 + u)) + E / (1 + u))
        by (field; lra).
      lra. }
    rewrite Rplus_0_r. apply Rabs_le; split; nra.
Qed.

(* -- the quotient y_i / Ŝ, in the proof's own notation --------------------------------- *)

Lemma t12_quotient (prec emin : Z) (choice : Z -> bool) (exp_fl : R -> R) (es : list R)
  (m ei : R) (t : sum_tree) (d : nat) (exp_rel exp_abs T gbar : R) :
  (1 < prec)%Z ->
  (forall e, In e es -> is_float prec emin e) ->
  In m es -> (forall e, In e es -> e <= m) -> In ei es ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel -> 0 <= exp_abs ->
  Permutation (leaves t) (map (fun e => exp_fl (fl prec emin choice (e - m))) es) ->
  (tree_depth t <= d)%nat ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  INR d * bpow radix2 (- prec) < 1 ->
  INR (length es) * exp_abs * exp (bpow radix2 (- prec) * gbar) < 1 - exp_rel ->
  let u := bpow radix2 (- prec) in
  let nn := INR (length es) in
  let G := 1 + INR d * u / (1 - INR d * u) in
  let p := exp (ei - m) / T in
  let S := tree_sum prec emin choice t in
  let z := exp_fl (fl prec emin choice (ei - m)) / S in
  let R1 := (1 + u) * G * (exp (u * (m - ei)) * exp (u * gbar) * exp (4 * nn * u ^ 2 / (1 - u) ^ 2))
         * (1 + exp_rel + nn * exp_abs) / (1 - exp_rel - nn * exp_abs * exp (u * gbar)) in
  exists K1 K2, 0 <= K1 /\ 0 < K2 /\ z <= p * K1 + exp_abs /\ p * K2 - exp_abs <= z /\
  (1 + u) * K1 <= R1 /\ (1 + u) / K2 <= R1 /\ 0 <= z <= 1 /\ 0 <= p /\
  1 <= S /\ S <= G * (nn * (1 + exp_rel + exp_abs)) /\ is_float prec emin S /\
  is_float prec emin (exp_fl (fl prec emin choice (ei - m))) /\ is_float prec emin 1 /\
  T * (1 - exp_rel - nn * exp_abs * exp (u * gbar)) / (exp (u * gbar) * G) <= S /\
  S <= G * T * ((1 + exp_rel) * exp (u * gbar) * exp (4 * nn * u ^ 2 / (1 - u) ^ 2) + nn * exp_abs).
Proof.
  intros Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE u nn G p S0 z0 R0.
  fold u in Hdu, HnE. fold nn in HnE.
  assert (Hu := fr_u_bounds prec Hp). fold u in Hu.
  assert (Hs : 0 < bpow radix2 emin) by apply bpow_gt_0.
  set (s := bpow radix2 emin) in *.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (Hnn : 0 <= nn) by apply pos_INR.
  assert (HB : 0 < exp (u * gbar)) by apply exp_pos.
  assert (Hrel1 : exp_rel < 1) by (assert (0 <= nn * exp_abs * exp (u * gbar)) by
    (apply Rmult_le_pos; [apply Rmult_le_pos |]; lra); lra).
  assert (Hmf : is_float prec emin m) by (apply Hfl, Hm).
  set (y := fun e => exp_fl (fl prec emin choice (e - m))).
  assert (Hterm : forall e, In e es ->
    is_float prec emin (y e) /\ 0 <= y e /\
    (1 - exp_rel) * (exp (e - m) * exp (- (u * (m - e)))) - exp_abs <= y e /\
    y e <= (1 + exp_rel) * (exp (e - m) * exp (u * (m - e))) + exp_abs).
  { intros e He. apply (t12_term prec emin choice exp_fl exp_rel exp_abs m e Hp (Hfl e He) Hmf
      (Hmax e He) Hexp (conj Hrel Hrel1)). }
  (* the exact sum of the computed terms *)
  set (Y := fold_right Rplus 0 (map y es)).
  assert (HYlo : (1 - exp_rel) * (T * exp (- (u * gbar))) - nn * exp_abs <= Y).
  { apply Rle_trans with (fold_right Rplus 0 (map (fun e =>
      (1 - exp_rel) * (exp (e - m) * exp (- (u * (m - e)))) + (- exp_abs)) es)).
    - rewrite fs_sum_plus, fs_sum_scale, fs_sum_const. fold nn.
      assert (Hl := fs_tilted_lower es m u T gbar Hm HT Hg).
      assert (H1 : (1 - exp_rel) * (T * exp (- (u * gbar))) <= (1 - exp_rel) *
        fold_right Rplus 0 (map (fun e => exp (e - m) * exp (- (u * (m - e)))) es))
        by (apply Rmult_le_compat_l; lra).
      lra.
    - apply fs_sum_le. intros e He. destruct (Hterm e He) as (_ & _ & H & _). lra. }
  assert (HYhi : Y <= (1 + exp_rel) * (T * exp (u * gbar + 4 * nn * u ^ 2 / (1 - u) ^ 2)) + nn * exp_abs).
  { apply Rle_trans with (fold_right Rplus 0 (map (fun e =>
      (1 + exp_rel) * (exp (e - m) * exp (u * (m - e))) + exp_abs) es)).
    - apply fs_sum_le. intros e He. destruct (Hterm e He) as (_ & _ & _ & H). lra.
    - rewrite fs_sum_plus, fs_sum_scale, fs_sum_const. fold nn.
      assert (Hl := fs_tilted_upper es m u T gbar Hm Hmax ltac:(lra) HT Hg). fold nn in Hl.
      assert (H1 : (1 + exp_rel) * fold_right Rplus 0 (map (fun e => exp (e - m) * exp (u * (m - e))) es)
        <= (1 + exp_rel) * (T * exp (u * gbar + 4 * nn * u ^ 2 / (1 - u) ^ 2)))
        by (apply Rmult_le_compat_l; lra).
      lra. }
  (* the summation tree *)
  assert (Hleaves : forall x, In x (leaves t) <-> In x (map y es)).
  { intros x; split; intros Hx;
      [apply (Permutation_in _ Hperm) | apply (Permutation_in _ (Permutation_sym Hperm))]; exact Hx. }
  assert (Hgood : fr_good_leaves prec emin t).
  { intros x Hx. apply Hleaves, in_map_iff in Hx. destruct Hx as (e & <- & He).
    destruct (Hterm e He) as (F & P & _). split; assumption. }
  assert (HY0 : 0 <= Y) by (apply fs_sum_nonneg; intros e He; apply Hterm, He).
  assert (HleafY : fr_leaf_sum t = Y)
    by (unfold fr_leaf_sum, Y; apply fs_perm_sum; exact Hperm).
  destruct (fr_tree_sum_bounds prec emin choice t Hp Hgood) as [HSlo HShi].
  rewrite HleafY in HSlo, HShi. fold u in HSlo, HShi.
  set (S := tree_sum prec emin choice t) in *. subst S0.
  assert (HG : (1 + u) ^ tree_depth t <= G).
  { apply Rle_trans with ((1 + u) ^ d); [apply Rle_pow; [lra | exact Hdepth] |].
    apply fr_pow_le_gamma; lra. }
  assert (HP1 : 1 <= (1 + u) ^ tree_depth t) by (apply pow_R1_Rle; lra).
  assert (HG1 : 1 <= G) by lra.
  assert (HS_hi : S <= G * Y) by (apply Rle_trans with (Y * (1 + u) ^ tree_depth t); [exact HShi | nra]).
  assert (HS_lo : Y / G <= S).
  { apply Rle_trans with (Y / (1 + u) ^ tree_depth t); [| exact HSlo].
    unfold Rdiv. apply Rmult_le_compat_l; [exact HY0 | apply Rinv_le_contravar; lra]. }
  (* the computed sum is at least exp_fl 0 = 1, and at least the entry's term *)
  assert (Hym : y m = 1).
  { unfold y. replace (m - m) with 0 by ring. rewrite fr_fl_0. apply Hexp. }
  assert (HS1 : 1 <= S).
  { rewrite <- Hym. apply (fr_tree_sum_ge_leaf prec emin choice t (y m) Hp Hgood).
    apply Hleaves, in_map, Hm. }
  assert (HyiS : y ei <= S).
  { apply (fr_tree_sum_ge_leaf prec emin choice t (y ei) Hp Hgood). apply Hleaves, in_map, Hi. }
  destruct (Hterm ei Hi) as (Hyif & Hyi0 & Hyilo & Hyihi).
  (* the quotient z = y_i / S *)
  set (z := y ei / S). subst z0. subst R0.
  assert (Hz0 : 0 <= z) by (apply Rmult_le_pos; [exact Hyi0 | apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (Hz1 : z <= 1).
  { unfold z. apply (Rmult_le_reg_r S); [lra |]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l; lra. }
  set (A := exp (u * (m - ei))) in *. set (B := exp (u * gbar)) in *.
  set (C := exp (4 * nn * u ^ 2 / (1 - u) ^ 2)) in *.
  assert (HA : 0 < A) by apply exp_pos. assert (HC : 1 <= C).
  { unfold C. apply fs_exp_ge_1.
    apply Rmult_le_pos; [apply Rmult_le_pos; [lra | apply pow_le; lra] |].
    apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra. }
  assert (HB1 : 1 <= B).
  { unfold B. apply fs_exp_ge_1. apply Rmult_le_pos; [lra |].
    rewrite Hg. apply fs_sum_nonneg. intros e He. assert (Hle := Hmax e He).
    apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra] | lra]. }
  assert (HeiT : exp (ei - m) = p * T) by (unfold p; field; lra).
  assert (Hp0 : 0 <= p) by (unfold p; apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra]).
  set (X1 := 1 - exp_rel - nn * exp_abs * B).
  assert (HX1 : 0 < X1) by (unfold X1; lra).
  assert (HBinv : exp (- (u * gbar)) = / B) by (unfold B; rewrite exp_Ropp; reflexivity).
  assert (HAinv : exp (- (u * (m - ei))) = / A) by (unfold A; rewrite exp_Ropp; reflexivity).
  (* the computed sum against T: S >= T X1 / (B G) *)
  assert (HSlo2 : T * X1 / (B * G) <= S).
  { apply Rle_trans with (Y / G); [| exact HS_lo].
    rewrite HBinv in HYlo.
    assert (Hx : T * X1 / B <= (1 - exp_rel) * (T * / B) - nn * exp_abs).
    { unfold X1. apply (Rmult_le_reg_r B); [lra |]. unfold Rdiv.
      replace (T * (1 - exp_rel - nn * exp_abs * B) * / B * B) with (T * (1 - exp_rel - nn * exp_abs * B))
        by (field; lra).
      replace (((1 - exp_rel) * (T * / B) - nn * exp_abs) * B) with ((1 - exp_rel) * T - nn * exp_abs * B)
        by (field; lra).
      assert (0 <= nn * exp_abs * B) by (apply Rmult_le_pos; [apply Rmult_le_pos |]; lra).
      assert (nn * exp_abs * B <= T * (nn * exp_abs * B))
        by (rewrite <- (Rmult_1_l (nn * exp_abs * B)) at 1; apply Rmult_le_compat_r; lra).
      lra. }
    assert (Hx' := Rmult_le_compat_r (/ G) _ _ (Rlt_le _ _ (Rinv_0_lt_compat G ltac:(lra)))
                     (Rle_trans _ _ _ Hx HYlo)).
    replace (T * X1 / (B * G)) with (T * X1 / B / G) by (field; lra).
    exact Hx'. }
  (* upper: z <= p K1 + E *)
  set (K1 := (1 + exp_rel) * G * A * B / X1).
  assert (Hzhi : z <= p * K1 + exp_abs).
  { apply (t12_upper p T A B G X1 exp_rel exp_abs S (y ei)); try lra.
    rewrite <- HeiT. rewrite <- Rmult_assoc in Hyihi. exact Hyihi. }
  (* lower: z >= p K2 − E *)
  set (W := (1 + exp_rel) * B * C + nn * exp_abs).
  assert (HBC : 1 <= B * C) by (replace 1 with (1 * 1) by ring; apply Rmult_le_compat; lra).
  assert (HnE0 : 0 <= nn * exp_abs) by (apply Rmult_le_pos; lra).
  assert (HW : 0 < W).
  { assert (0 < (1 + exp_rel) * (B * C)) by (apply Rmult_lt_0_compat; lra).
    unfold W. rewrite Rmult_assoc. lra. }
  (* the computed sum against T: S <= G T W *)
  assert (HShi2 : S <= G * T * W).
  { apply Rle_trans with (G * Y); [exact HS_hi |].
    replace (G * T * W) with (G * (T * W)) by ring. apply Rmult_le_compat_l; [lra |].
    rewrite exp_plus in HYhi. fold B C in HYhi.
    assert (nn * exp_abs <= T * (nn * exp_abs))
      by (rewrite <- (Rmult_1_l (nn * exp_abs)) at 1; apply Rmult_le_compat_r;
          [apply Rmult_le_pos |]; lra).
    unfold W. nra. }
  set (K2 := (1 - exp_rel) / (G * A * W)).
  assert (Hzlo : p * K2 - exp_abs <= z).
  { apply (t12_lower p T A G W exp_rel exp_abs S (y ei)); try lra.
    rewrite <- HeiT. rewrite HAinv in Hyilo. unfold Rdiv. lra. }
  (* the ratios against the printed factor R1 *)
  set (R1 := (1 + u) * G * (A * B * C) * (1 + exp_rel + nn * exp_abs) / X1).
  pose proof HnE0 as HnEpos.
  assert (HK1 : (1 + u) * K1 <= R1).
  { replace ((1 + u) * K1) with ((1 + u) * G * (A * B) * (1 + exp_rel) / X1) by (unfold K1; field; lra).
    replace R1 with ((1 + u) * G * (A * B) * (C * (1 + exp_rel + nn * exp_abs)) / X1)
      by (unfold R1; field; lra).
    assert (HGAB : 0 <= (1 + u) * G * (A * B)) by (apply Rmult_le_pos; [apply Rmult_le_pos |]; nra).
    assert ((1 + exp_rel) <= C * (1 + exp_rel + nn * exp_abs)) by nra.
    unfold Rdiv. apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat; lra |].
    apply Rmult_le_compat_l; lra. }
  assert (HK2 : (1 + u) / K2 <= R1).
  { unfold K2, R1.
    replace ((1 + u) / ((1 - exp_rel) / (G * A * W))) with ((1 + u) * G * A * W / (1 - exp_rel))
      by (field; repeat split; lra).
    assert (HWle : W <= B * C * (1 + exp_rel + nn * exp_abs)) by (unfold W; nra).
    assert (HX1le : X1 <= 1 - exp_rel) by (unfold X1; nra).
    apply Rle_trans with ((1 + u) * G * A * (B * C * (1 + exp_rel + nn * exp_abs)) / (1 - exp_rel)).
    { unfold Rdiv. apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat; lra |].
      apply Rmult_le_compat_l; [apply Rmult_le_pos; [apply Rmult_le_pos |]; lra | exact HWle]. }
    replace ((1 + u) * G * (A * B * C) * (1 + exp_rel + nn * exp_abs) / X1)
      with ((1 + u) * G * A * (B * C * (1 + exp_rel + nn * exp_abs)) / X1) by (field; lra).
    assert (Hpos : 0 <= (1 + u) * G * A * (B * C * (1 + exp_rel + nn * exp_abs))).
    { apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rmult_le_pos |] |]; lra. }
    unfold Rdiv. apply Rmult_le_compat_l; [exact Hpos |].
    apply Rinv_le_contravar; lra. }
  assert (HK1pos : 0 <= K1)
    by (unfold K1; apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rmult_le_pos |] |]; try nra;
        apply Rlt_le, Rinv_0_lt_compat; lra).
  assert (HK2pos : 0 < K2)
    by (unfold K2; apply Rdiv_lt_0_compat; [lra | apply Rmult_lt_0_compat; [apply Rmult_lt_0_compat |]; lra]).
  (* the computed sum is at most n (1 + ε + η) (1 + γ): every term is at most 1 + ε + η *)
  assert (HYn : Y <= nn * (1 + exp_rel + exp_abs)).
  { unfold Y, nn. rewrite <- fs_sum_const. apply fs_sum_le. intros e He.
    destruct (Hterm e He) as (_ & _ & _ & H).
    assert (Hexp1 : exp (e - m) * exp (u * (m - e)) <= 1).
    { rewrite <- exp_plus, <- exp_0. apply fs_exp_le. assert (Hle := Hmax e He). nra. }
    assert ((1 + exp_rel) * (exp (e - m) * exp (u * (m - e))) <= 1 + exp_rel)
      by (rewrite <- (Rmult_1_r (1 + exp_rel)) at 2; apply Rmult_le_compat_l; lra).
    lra. }
  assert (HSn : S <= G * (nn * (1 + exp_rel + exp_abs)))
    by (apply Rle_trans with (G * Y); [exact HS_hi | apply Rmult_le_compat_l; lra]).
  assert (HSf : is_float prec emin S) by (apply fr_tree_sum_float; assumption).
  assert (H1f : is_float prec emin 1) by (rewrite <- Hym; apply Hterm, Hm).
  exists K1, K2.
  split; [exact HK1pos |]. split; [exact HK2pos |]. split; [exact Hzhi |].
  split; [exact Hzlo |]. split; [exact HK1 |]. split; [exact HK2 |].
  split; [exact (conj Hz0 Hz1) |]. split; [exact Hp0 |]. split; [exact HS1 |].
  split; [exact HSn |]. split; [exact HSf |]. split; [exact Hyif |]. split; [exact H1f |].
  split; [exact HSlo2 | exact HShi2].
Qed.

Lemma t12_core (prec emin : Z) (choice : Z -> bool) (exp_fl : R -> R) (es : list R)
  (m ei : R) (t : sum_tree) (d : nat) (exp_rel exp_abs T gbar : R) :
  (1 < prec)%Z ->
  (forall e, In e es -> is_float prec emin e) ->
  In m es -> (forall e, In e es -> e <= m) -> In ei es ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel -> 0 <= exp_abs ->
  Permutation (leaves t) (map (fun e => exp_fl (fl prec emin choice (e - m))) es) ->
  (tree_depth t <= d)%nat ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  INR d * bpow radix2 (- prec) < 1 ->
  INR (length es) * exp_abs * exp (bpow radix2 (- prec) * gbar) < 1 - exp_rel ->
  2 * bpow radix2 (- prec) * exp_abs <= bpow radix2 emin ->
  let u := bpow radix2 (- prec) in
  let nn := INR (length es) in
  let G := 1 + INR d * u / (1 - INR d * u) in
  let p := exp (ei - m) / T in
  let p_hat := fl prec emin choice
    (exp_fl (fl prec emin choice (ei - m)) / tree_sum prec emin choice t) in
  is_float prec emin p_hat /\ 0 <= p_hat <= 1 /\
  Rabs (p_hat - p) <=
    p * ((1 + u) * G * (exp (u * (m - ei)) * exp (u * gbar) * exp (4 * nn * u ^ 2 / (1 - u) ^ 2))
         * (1 + exp_rel + nn * exp_abs) / (1 - exp_rel - nn * exp_abs * exp (u * gbar)) - 1)
    + exp_abs + bpow radix2 emin / 2.
Proof.
  intros Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE HuE u nn G p p_hat.
  destruct (t12_quotient prec emin choice exp_fl es m ei t d exp_rel exp_abs T gbar
    Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE)
    as (K1 & K2 & HK1 & HK2 & Hzhi & Hzlo & HR1 & HR2 & Hz & Hp0 & HS1 & _ & _ & _ & H1f & _ & _).
  fold u nn G p in HK1, HK2, Hzhi, Hzlo, HR1, HR2, Hz, Hp0.
  set (z := exp_fl (fl prec emin choice (ei - m)) / tree_sum prec emin choice t) in *.
  assert (Hu := fr_u_bounds prec Hp). fold u in Hu.
  destruct (fr_round_error prec emin choice z Hp) as (eps & eta & Heps & Heta & H0 & Hround).
  fold u in Heps, HuE.
  split; [| split].
  - apply fr_is_float_fl, Hp.
  - split.
    + rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | lra].
    + rewrite <- (fr_fl_float prec emin choice 1 H1f). apply fr_fl_le; [exact Hp | lra].
  - unfold p_hat. fold z. rewrite Hround.
    apply (t12_round z p K1 K2 _ exp_abs u (bpow radix2 emin) eps eta); try lra; assumption.
Qed.

(* The reciprocal form p_hat = fl(y_i · fl(1/S)): one more rounding, of a normal 1/S. *)
Lemma t12_reciprocal_core (prec emin : Z) (choice : Z -> bool) (exp_fl : R -> R) (es : list R)
  (m ei : R) (t : sum_tree) (d : nat) (exp_rel exp_abs T gbar : R) :
  (1 < prec)%Z ->
  (forall e, In e es -> is_float prec emin e) ->
  In m es -> (forall e, In e es -> e <= m) -> In ei es ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel -> 0 <= exp_abs ->
  Permutation (leaves t) (map (fun e => exp_fl (fl prec emin choice (e - m))) es) ->
  (tree_depth t <= d)%nat ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  INR d * bpow radix2 (- prec) < 1 ->
  INR (length es) * exp_abs * exp (bpow radix2 (- prec) * gbar) < 1 - exp_rel ->
  2 * bpow radix2 (- prec) * (1 + bpow radix2 (- prec)) * exp_abs <= bpow radix2 emin ->
  let u := bpow radix2 (- prec) in
  let nn := INR (length es) in
  let G := 1 + INR d * u / (1 - INR d * u) in
  G * (nn * (1 + exp_rel + exp_abs)) <= 2 * u / bpow radix2 emin ->
  let p := exp (ei - m) / T in
  let p_hat := fl prec emin choice (exp_fl (fl prec emin choice (ei - m)) *
    fl prec emin choice (1 / tree_sum prec emin choice t)) in
  is_float prec emin p_hat /\ 0 <= p_hat /\
  Rabs (p_hat - p) <=
    p * ((1 + u) * ((1 + u) * G * (exp (u * (m - ei)) * exp (u * gbar) *
      exp (4 * nn * u ^ 2 / (1 - u) ^ 2)) * (1 + exp_rel + nn * exp_abs)
      / (1 - exp_rel - nn * exp_abs * exp (u * gbar))) - 1)
    + (1 + u) * exp_abs + bpow radix2 emin / 2.
Proof.
  intros Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE HuE u nn G Hnorm p p_hat.
  destruct (t12_quotient prec emin choice exp_fl es m ei t d exp_rel exp_abs T gbar
    Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE)
    as (K1 & K2 & HK1 & HK2 & Hzhi & Hzlo & HR1 & HR2 & Hz & Hp0 & HS1 & HSn & _ & _ & _ & _ & _).
  fold u nn G p in HK1, HK2, Hzhi, Hzlo, HR1, HR2, Hz, Hp0, HSn.
  set (R1 := (1 + u) * G * (exp (u * (m - ei)) * exp (u * gbar) *
      exp (4 * nn * u ^ 2 / (1 - u) ^ 2)) * (1 + exp_rel + nn * exp_abs)
      / (1 - exp_rel - nn * exp_abs * exp (u * gbar))) in *.
  set (S := tree_sum prec emin choice t) in *.
  set (yi := exp_fl (fl prec emin choice (ei - m))) in *.
  set (z := yi / S) in *.
  assert (Hu := fr_u_bounds prec Hp). fold u in Hu, HuE.
  assert (Hs : 0 < bpow radix2 emin) by apply bpow_gt_0.
  set (s := bpow radix2 emin) in *.
  (* 1/S is a normal float: S <= 2u/s *)
  assert (HSmax : S <= 2 * u / s) by lra.
  assert (Hnormal : bpow radix2 (emin + prec - 1) <= Rabs (1 / S)).
  { rewrite fr_smallest_normal. fold u s. rewrite Rabs_pos_eq
      by (apply Rlt_le, Rdiv_lt_0_compat; lra).
    replace (s / (2 * u)) with (1 / (2 * u / s)) by (field; lra).
    unfold Rdiv. apply Rmult_le_compat_l; [lra |].
    apply Rinv_le_contravar; [lra | exact HSmax]. }
  destruct (fr_round_normal prec emin choice (1 / S) Hp Hnormal) as (rho & Hrho & Hr).
  fold u in Hrho. apply Rabs_le_inv in Hrho.
  assert (Hud := fr_u_div u ltac:(lra)).
  assert (Hlo : / (1 + u) <= 1 + rho)
    by (replace (/ (1 + u)) with (1 - u / (1 + u)) by (field; lra); lra).
  assert (Hhi : 1 + rho <= 1 + u) by lra.
  set (z' := yi * fl prec emin choice (1 / S)).
  assert (Hz' : z' = z * (1 + rho)) by (unfold z', z; rewrite Hr; unfold Rdiv; ring).
  assert (Hz'0 : 0 <= z') by (rewrite Hz'; apply Rmult_le_pos; lra).
  assert (Hz'hi : z' <= p * ((1 + u) * K1) + (1 + u) * exp_abs).
  { rewrite Hz'. apply Rle_trans with (z * (1 + u)); [apply Rmult_le_compat_l; lra |]. nra. }
  assert (Hz'lo : p * (K2 / (1 + u)) - (1 + u) * exp_abs <= z').
  { rewrite Hz'. apply Rle_trans with (z / (1 + u)).
    - apply Rle_trans with ((p * K2 - exp_abs) / (1 + u)).
      + replace ((p * K2 - exp_abs) / (1 + u)) with (p * (K2 / (1 + u)) - exp_abs / (1 + u))
          by (field; lra).
        assert (exp_abs / (1 + u) <= (1 + u) * exp_abs).
        { apply (Rmult_le_reg_r (1 + u)); [lra |].
          replace (exp_abs / (1 + u) * (1 + u)) with exp_abs by (field; lra). nra. }
        lra.
      + unfold Rdiv. apply Rmult_le_compat_r; [apply Rlt_le, Rinv_0_lt_compat |]; lra.
    - unfold Rdiv. apply Rmult_le_compat_l; lra. }
  destruct (fr_round_error prec emin choice z' Hp) as (eps & eta & Heps & Heta & H0 & Hround).
  fold u in Heps.
  split; [| split].
  - apply fr_is_float_fl, Hp.
  - rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | exact Hz'0].
  - unfold p_hat. fold yi S z'. rewrite Hround.
    assert (HK1' : 0 <= (1 + u) * K1) by (apply Rmult_le_pos; lra).
    assert (HK2' : 0 < K2 / (1 + u)) by (apply Rdiv_lt_0_compat; lra).
    assert (HE' : 0 <= (1 + u) * exp_abs) by (apply Rmult_le_pos; lra).
    assert (HR1' : (1 + u) * ((1 + u) * K1) <= (1 + u) * R1) by (apply Rmult_le_compat_l; lra).
    assert (HR2' : (1 + u) / (K2 / (1 + u)) <= (1 + u) * R1).
    { replace ((1 + u) / (K2 / (1 + u))) with ((1 + u) * ((1 + u) / K2)) by (field; lra).
      apply Rmult_le_compat_l; lra. }
    assert (HuE' : 2 * u * ((1 + u) * exp_abs) <= s) by lra.
    exact (t12_round z' p ((1 + u) * K1) (K2 / (1 + u)) ((1 + u) * R1) ((1 + u) * exp_abs)
      u s eps eta Hz'0 Hp0 HK1' HK2' HE' ltac:(lra) Hz'hi Hz'lo HR1' HR2' Heps Heta H0 HuE').
Qed.

(* Exp of the max-shifted log-softmax: p_hat = exp_fl(fl(fl(e_i − m) − log_fl(S))).  The
   exponent misses ln p_i = (e_i − m) − ln T by at most D; M bounds |ln S − ln T|. *)
Lemma t12_exp_log_core (prec emin : Z) (choice : Z -> bool) (exp_fl log_fl : R -> R)
  (es : list R) (m ei : R) (t : sum_tree) (d : nat) (exp_rel exp_abs log_rel log_abs T gbar M : R) :
  (1 < prec)%Z ->
  (forall e, In e es -> is_float prec emin e) ->
  In m es -> (forall e, In e es -> e <= m) -> In ei es ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel -> 0 <= exp_abs ->
  Permutation (leaves t) (map (fun e => exp_fl (fl prec emin choice (e - m))) es) ->
  log_accurate prec emin log_fl log_rel log_abs -> 0 <= log_rel -> 0 <= log_abs ->
  (tree_depth t <= d)%nat ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  INR d * bpow radix2 (- prec) < 1 ->
  INR (length es) * exp_abs * exp (bpow radix2 (- prec) * gbar) < 1 - exp_rel ->
  let u := bpow radix2 (- prec) in
  let nn := INR (length es) in
  let G := 1 + INR d * u / (1 - INR d * u) in
  let B := exp (u * gbar) in
  let W := (1 + exp_rel) * B * exp (4 * nn * u ^ 2 / (1 - u) ^ 2) + nn * exp_abs in
  let X1 := 1 - exp_rel - nn * exp_abs * B in
  ln (G * B / X1) <= M -> ln (G * W) <= M ->
  let p := exp (ei - m) / T in
  let p_hat := exp_fl (fl prec emin choice
    (fl prec emin choice (ei - m) - log_fl (tree_sum prec emin choice t))) in
  is_float prec emin p_hat /\ 0 <= p_hat /\
  Rabs (p_hat - p) <=
    p * ((1 + exp_rel) * exp (u * (2 + u) * (m - ei) + M + (log_rel + u * (1 + log_rel))
      * (ln T + M) + (1 + u) * log_abs) - 1) + exp_abs.
Proof.
  intros Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla Hdepth HT Hg Hdu HnE
    u nn G B W X1 HMa HMb p p_hat.
  destruct (t12_quotient prec emin choice exp_fl es m ei t d exp_rel exp_abs T gbar
    Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE)
    as (K1 & K2 & _ & _ & _ & _ & _ & _ & _ & Hp0 & HS1 & _ & HSf & _ & _ & HSlo & HShi).
  fold u nn G in Hp0, HSlo, HShi. fold B in HSlo, HShi. fold W in HShi. fold X1 in HSlo.
  fold p in Hp0.
  set (S := tree_sum prec emin choice t) in *.
  assert (Hu := fr_u_bounds prec Hp). fold u in Hu.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (Hnn : 0 <= nn) by apply pos_INR.
  assert (HB : 1 <= B).
  { unfold B. apply fs_exp_ge_1. apply Rmult_le_pos; [lra |].
    rewrite Hg. apply fs_sum_nonneg. intros e He. assert (Hle := Hmax e He).
    apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra] | lra]. }
  assert (HX1 : 0 < X1) by (unfold X1; fold u nn B in HnE; lra).
  assert (HG1 : 1 <= G).
  { unfold G. assert (0 <= INR d * u / (1 - INR d * u)).
    { apply Rmult_le_pos; [apply Rmult_le_pos; [apply pos_INR | lra] |].
      apply Rlt_le, Rinv_0_lt_compat; fold u in Hdu; lra. }
    lra. }
  assert (HC : 1 <= exp (4 * nn * u ^ 2 / (1 - u) ^ 2)).
  { apply fs_exp_ge_1. apply Rmult_le_pos; [apply Rmult_le_pos; [lra | apply pow_le; lra] |].
    apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra. }
  assert (HW : 0 < W).
  { unfold W. assert (0 <= nn * exp_abs) by (apply Rmult_le_pos; lra).
    assert (1 <= (1 + exp_rel) * B) by nra.
    assert (1 <= (1 + exp_rel) * B * exp (4 * nn * u ^ 2 / (1 - u) ^ 2)) by nra.
    lra. }
  (* |ln S − ln T| <= M, and ln T, ln S >= 0 *)
  assert (HlnT : 0 <= ln T) by (rewrite <- ln_1; apply fs_ln_le; lra).
  assert (HlnS : 0 <= ln S) by (rewrite <- ln_1; apply fs_ln_le; lra).
  assert (HShi' : ln S <= ln T + M).
  { apply Rle_trans with (ln (G * W * T)).
    - apply fs_ln_le; [lra |]. lra.
    - rewrite ln_mult by (try apply Rmult_lt_0_compat; lra). lra. }
  assert (HSlo' : ln T - M <= ln S).
  { apply Rle_trans with (ln (T / (G * B / X1))).
    - unfold Rdiv at 1. rewrite ln_mult, ln_Rinv.
      + lra.
      + apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra.
      + lra.
      + apply Rinv_0_lt_compat, Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra.
    - apply fs_ln_le.
      + apply Rdiv_lt_0_compat; [lra | apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra].
      + replace (T / (G * B / X1)) with (T * X1 / (B * G)) by (field; lra). exact HSlo. }
  (* the computed log of the computed sum *)
  destruct (Hlog S HSf HS1) as (HLf & HL0 & HLerr).
  set (L := log_fl S) in *.
  apply Rabs_le_inv in HLerr.
  (* the rounded shift and the rounded subtraction *)
  assert (Hmf : is_float prec emin m) by (apply Hfl, Hm).
  destruct (fr_minus_error prec emin choice ei m Hp (Hfl ei Hi) Hmf) as (dl & Hdl & Hx).
  set (xh := fl prec emin choice (ei - m)) in *.
  assert (Hxf : is_float prec emin xh) by (apply fr_is_float_fl, Hp).
  assert (Hxle : xh <= 0).
  { unfold xh. rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp |].
    assert (Hle := Hmax ei Hi). lra. }
  destruct (fr_minus_error prec emin choice xh L Hp Hxf HLf) as (nu & Hnu & Hl).
  set (lh := fl prec emin choice (xh - L)) in *.
  assert (Hlf : is_float prec emin lh) by (apply fr_is_float_fl, Hp).
  assert (Hlle : lh <= 0).
  { unfold lh. rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp | lra]. }
  destruct Hexp as [_ Hexpx].
  destruct (Hexpx lh Hlf Hlle) as (Hpf & Hp0' & Hperr).
  fold u in Hdl, Hnu. apply Rabs_le_inv in Hdl. apply Rabs_le_inv in Hnu.
  (* the exponent's error Δ = lh − ((ei − m) − ln T), |Δ| <= D *)
  set (g := m - ei).
  assert (Hg0 : 0 <= g) by (unfold g; assert (Hle := Hmax ei Hi); lra).
  set (D := u * (2 + u) * g + M + (log_rel + u * (1 + log_rel)) * (ln T + M) + (1 + u) * log_abs).
  assert (HDelta : Rabs (lh - (ei - m - ln T)) <= D).
  { rewrite Hl, Hx.
    replace (ei - m) with (- g) by (unfold g; ring).
    (* the pieces, each from a product of two signed factors *)
    assert (Ha1 : - (u * g) <= - g * dl <= u * g).
    { assert (0 <= g * (u + dl)) by (apply Rmult_le_pos; lra).
      assert (0 <= g * (u - dl)) by (apply Rmult_le_pos; lra). split; lra. }
    assert (Hlrp : 0 <= log_rel * (ln T + M - ln S)) by (apply Rmult_le_pos; lra).
    assert (Hlr0 : 0 <= log_rel * ln S) by (apply Rmult_le_pos; lra).
    assert (HLhi : L <= (1 + log_rel) * (ln T + M) + log_abs) by lra.
    assert (Ha2 : - (log_rel * (ln T + M) + log_abs + M) <= L - ln T
                  <= log_rel * (ln T + M) + log_abs + M) by (split; lra).
    assert (Hxabs : - (g * (1 + u)) <= - g * (1 + dl) <= 0).
    { assert (0 <= g * (1 + dl)) by (apply Rmult_le_pos; lra).
      assert (0 <= g * (u - dl)) by (apply Rmult_le_pos; lra). split; lra. }
    set (K := g * (1 + u) + ((1 + log_rel) * (ln T + M) + log_abs)).
    set (Z := - g * (1 + dl) - L).
    assert (HZ : - K <= Z <= 0) by (unfold Z, K; split; lra).
    assert (Ha3 : - (u * K) <= Z * nu <= u * K).
    { assert (0 <= (- Z) * (u - nu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (- Z) * (u + nu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (K + Z) * u) by (apply Rmult_le_pos; lra).
      split; lra. }
    replace (Z * (1 + nu) - (- g - ln T))
      with (- g * dl - (L - ln T) + Z * nu) by (unfold Z; ring).
    apply Rabs_le. unfold D. unfold K in Ha3. split; lra. }
  (* p = exp((ei − m) − ln T), exp lh = p e^Δ *)
  assert (Hpexp : p = exp (ei - m - ln T)).
  { unfold p. unfold Rminus at 2. rewrite exp_plus, exp_Ropp, exp_ln by lra. reflexivity. }
  assert (Hlexp : exp lh = p * exp (lh - (ei - m - ln T))).
  { rewrite Hpexp, <- exp_plus. f_equal. ring. }
  assert (Hexp1 := fs_expm1_abs _ _ HDelta).
  assert (HeD : exp (lh - (ei - m - ln T)) <= exp D).
  { apply fs_exp_le. apply Rle_trans with (Rabs (lh - (ei - m - ln T))); [apply Rle_abs | exact HDelta]. }
  split; [exact Hpf | split; [exact Hp0' |]].
  unfold p_hat. fold xh L lh.
  apply Rabs_le_inv in Hperr. apply Rabs_le_inv in Hexp1.
  assert (H1 : exp lh <= p * exp D) by (rewrite Hlexp; apply Rmult_le_compat_l; lra).
  assert (H2 : Rabs (exp lh - p) <= p * (exp D - 1)).
  { rewrite Hlexp. replace (p * exp (lh - (ei - m - ln T)) - p) with (p * (exp (lh - (ei - m - ln T)) - 1))
      by ring.
    rewrite Rabs_mult, Rabs_pos_eq by lra. apply Rmult_le_compat_l; [lra |].
    apply Rabs_le; lra. }
  apply Rabs_le_inv in H2.
  assert (H3 : exp_rel * exp lh <= exp_rel * (p * exp D)) by (apply Rmult_le_compat_l; lra).
  apply Rabs_le. fold D. split; lra.
Qed.

(* The log-sum-exp first: p_hat = exp_fl(fl(e_i − fl(m + log_fl(S)))).  The logit e_i
   enters exactly; rounding m + log_fl(S) costs u·|m + log_fl(S)| <= u (top + Lm). *)
Lemma t12_exp_lse_core (prec emin : Z) (choice : Z -> bool) (exp_fl log_fl : R -> R)
  (es : list R) (m ei : R) (t : sum_tree) (d : nat) (exp_rel exp_abs log_rel log_abs T gbar M top : R) :
  (1 < prec)%Z ->
  (forall e, In e es -> is_float prec emin e) ->
  In m es -> (forall e, In e es -> e <= m) -> In ei es ->
  exp_accurate prec emin exp_fl exp_rel exp_abs -> 0 <= exp_rel -> 0 <= exp_abs ->
  Permutation (leaves t) (map (fun e => exp_fl (fl prec emin choice (e - m))) es) ->
  log_accurate prec emin log_fl log_rel log_abs -> 0 <= log_rel -> 0 <= log_abs ->
  Rabs m <= top ->
  (tree_depth t <= d)%nat ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  INR d * bpow radix2 (- prec) < 1 ->
  INR (length es) * exp_abs * exp (bpow radix2 (- prec) * gbar) < 1 - exp_rel ->
  let u := bpow radix2 (- prec) in
  let nn := INR (length es) in
  let G := 1 + INR d * u / (1 - INR d * u) in
  let B := exp (u * gbar) in
  let W := (1 + exp_rel) * B * exp (4 * nn * u ^ 2 / (1 - u) ^ 2) + nn * exp_abs in
  let X1 := 1 - exp_rel - nn * exp_abs * B in
  ln (G * B / X1) <= M -> ln (G * W) <= M ->
  let p := exp (ei - m) / T in
  let p_hat := exp_fl (fl prec emin choice
    (ei - fl prec emin choice (m + log_fl (tree_sum prec emin choice t)))) in
  let Lm := (1 + log_rel) * (ln T + M) + log_abs in
  is_float prec emin p_hat /\ 0 <= p_hat /\
  Rabs (p_hat - p) <=
    p * ((1 + exp_rel) * exp (M + log_rel * (ln T + M) + log_abs + u * (1 + u) * (top + Lm)
      + u * ((m - ei) + Lm)) - 1) + exp_abs.
Proof.
  intros Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla Htop Hdepth HT Hg Hdu HnE
    u nn G B W X1 HMa HMb p p_hat Lm.
  destruct (t12_quotient prec emin choice exp_fl es m ei t d exp_rel exp_abs T gbar
    Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu HnE)
    as (K1 & K2 & _ & _ & _ & _ & _ & _ & _ & Hp0 & HS1 & _ & HSf & _ & _ & HSlo & HShi).
  fold u nn G in Hp0, HSlo, HShi. fold B in HSlo, HShi. fold W in HShi. fold X1 in HSlo.
  fold p in Hp0.
  set (S := tree_sum prec emin choice t) in *.
  assert (Hu := fr_u_bounds prec Hp). fold u in Hu.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (Hnn : 0 <= nn) by apply pos_INR.
  assert (HB : 1 <= B).
  { unfold B. apply fs_exp_ge_1. apply Rmult_le_pos; [lra |].
    rewrite Hg. apply fs_sum_nonneg. intros e He. assert (Hle := Hmax e He).
    apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra] | lra]. }
  assert (HX1 : 0 < X1) by (unfold X1; fold u nn B in HnE; lra).
  assert (HG1 : 1 <= G).
  { unfold G. assert (0 <= INR d * u / (1 - INR d * u)).
    { apply Rmult_le_pos; [apply Rmult_le_pos; [apply pos_INR | lra] |].
      apply Rlt_le, Rinv_0_lt_compat; fold u in Hdu; lra. }
    lra. }
  assert (HC : 1 <= exp (4 * nn * u ^ 2 / (1 - u) ^ 2)).
  { apply fs_exp_ge_1. apply Rmult_le_pos; [apply Rmult_le_pos; [lra | apply pow_le; lra] |].
    apply Rlt_le, Rinv_0_lt_compat, pow_lt; lra. }
  assert (HW : 0 < W).
  { unfold W. assert (0 <= nn * exp_abs) by (apply Rmult_le_pos; lra).
    assert (1 <= (1 + exp_rel) * B) by nra.
    assert (1 <= (1 + exp_rel) * B * exp (4 * nn * u ^ 2 / (1 - u) ^ 2)) by nra.
    lra. }
  (* |ln S − ln T| <= M, and ln T, ln S >= 0 *)
  assert (HlnT : 0 <= ln T) by (rewrite <- ln_1; apply fs_ln_le; lra).
  assert (HlnS : 0 <= ln S) by (rewrite <- ln_1; apply fs_ln_le; lra).
  assert (HShi' : ln S <= ln T + M).
  { apply Rle_trans with (ln (G * W * T)).
    - apply fs_ln_le; [lra |]. lra.
    - rewrite ln_mult by (try apply Rmult_lt_0_compat; lra). lra. }
  assert (HSlo' : ln T - M <= ln S).
  { apply Rle_trans with (ln (T / (G * B / X1))).
    - unfold Rdiv at 1. rewrite ln_mult, ln_Rinv.
      + lra.
      + apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra.
      + lra.
      + apply Rinv_0_lt_compat, Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra.
    - apply fs_ln_le.
      + apply Rdiv_lt_0_compat; [lra | apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat |]; lra].
      + replace (T / (G * B / X1)) with (T * X1 / (B * G)) by (field; lra). exact HSlo. }
  (* the computed log of the computed sum *)
  destruct (Hlog S HSf HS1) as (HLf & HL0 & HLerr).
  set (L := log_fl S) in *.
  apply Rabs_le_inv in HLerr.
  (* the rounded log-sum-exp and the rounded subtraction *)
  assert (Hmf : is_float prec emin m) by (apply Hfl, Hm).
  destruct (fr_plus_error prec emin choice m L Hp Hmf HLf) as (mu & Hmu & Hlse).
  set (lse := fl prec emin choice (m + L)) in *.
  assert (Hlsef : is_float prec emin lse) by (apply fr_is_float_fl, Hp).
  assert (Hlsem : m <= lse).
  { unfold lse. rewrite <- (fr_fl_float prec emin choice m Hmf) at 1.
    apply fr_fl_le; [exact Hp | lra]. }
  assert (Hif : is_float prec emin ei) by (apply Hfl, Hi).
  destruct (fr_minus_error prec emin choice ei lse Hp Hif Hlsef) as (nu & Hnu & Hl).
  set (lh := fl prec emin choice (ei - lse)) in *.
  assert (Hlf : is_float prec emin lh) by (apply fr_is_float_fl, Hp).
  assert (Hlle : lh <= 0).
  { unfold lh. rewrite <- (fr_fl_0 prec emin choice). apply fr_fl_le; [exact Hp |].
    assert (Hle := Hmax ei Hi). lra. }
  destruct Hexp as [_ Hexpx].
  destruct (Hexpx lh Hlf Hlle) as (Hpf & Hp0' & Hperr).
  assert (Hud := fr_u_div u ltac:(lra)).
  fold u in Hmu, Hnu. apply Rabs_le_inv in Hmu. apply Rabs_le_inv in Hnu.
  assert (Hmu' : - u <= mu <= u) by lra.
  (* the exponent's error Δ = lh − ((ei − m) − ln T), |Δ| <= D *)
  set (g := m - ei).
  assert (Hg0 : 0 <= g) by (unfold g; assert (Hle := Hmax ei Hi); lra).
  set (D := M + log_rel * (ln T + M) + log_abs + u * (1 + u) * (top + Lm) + u * (g + Lm)).
  assert (HDelta : Rabs (lh - (ei - m - ln T)) <= D).
  { rewrite Hl, Hlse.
    apply Rabs_le_inv in Htop.
    assert (Hlrp : 0 <= log_rel * (ln T + M - ln S)) by (apply Rmult_le_pos; lra).
    assert (Hlr0 : 0 <= log_rel * ln S) by (apply Rmult_le_pos; lra).
    assert (HLhi : L <= Lm) by (unfold Lm; lra).
    assert (Ha2 : - (log_rel * (ln T + M) + log_abs + M) <= L - ln T
                  <= log_rel * (ln T + M) + log_abs + M) by (split; lra).
    (* the rounding of m + L: |μ (m + L)| <= u (top + Lm) *)
    assert (Hml : - (top + Lm) <= m + L <= top + Lm) by (split; lra).
    assert (Ha4 : - (u * (top + Lm)) <= mu * (m + L) <= u * (top + Lm)).
    { assert (0 <= (top + Lm - (m + L)) * (u - mu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (top + Lm + (m + L)) * (u + mu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (top + Lm - (m + L)) * (u + mu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (top + Lm + (m + L)) * (u - mu)) by (apply Rmult_le_pos; lra).
      split; lra. }
    set (K := g + Lm + u * (top + Lm)).
    set (Z := ei - (m + L) * (1 + mu)).
    assert (HZ : - K <= Z <= 0).
    { assert (Hle := Hmax ei Hi).
      unfold Z, K, g. replace (ei - (m + L) * (1 + mu)) with (- (m - ei) - L - mu * (m + L)) by ring.
      split; lra. }
    assert (Ha3 : - (u * K) <= Z * nu <= u * K).
    { assert (0 <= (- Z) * (u - nu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (- Z) * (u + nu)) by (apply Rmult_le_pos; lra).
      assert (0 <= (K + Z) * u) by (apply Rmult_le_pos; lra).
      split; lra. }
    replace (Z * (1 + nu) - (ei - m - ln T))
      with (- (L - ln T) - mu * (m + L) + Z * nu) by (unfold Z; ring).
    apply Rabs_le. unfold D. unfold K in Ha3. split; lra. }
  (* p = exp((ei − m) − ln T), exp lh = p e^Δ *)
  assert (Hpexp : p = exp (ei - m - ln T)).
  { unfold p. unfold Rminus at 2. rewrite exp_plus, exp_Ropp, exp_ln by lra. reflexivity. }
  assert (Hlexp : exp lh = p * exp (lh - (ei - m - ln T))).
  { rewrite Hpexp, <- exp_plus. f_equal. ring. }
  assert (Hexp1 := fs_expm1_abs _ _ HDelta).
  assert (HeD : exp (lh - (ei - m - ln T)) <= exp D).
  { apply fs_exp_le. apply Rle_trans with (Rabs (lh - (ei - m - ln T))); [apply Rle_abs | exact HDelta]. }
  split; [exact Hpf | split; [exact Hp0' |]].
  unfold p_hat. fold L lse lh.
  apply Rabs_le_inv in Hperr. apply Rabs_le_inv in Hexp1.
  assert (H1 : exp lh <= p * exp D) by (rewrite Hlexp; apply Rmult_le_compat_l; lra).
  assert (H2 : Rabs (exp lh - p) <= p * (exp D - 1)).
  { rewrite Hlexp. replace (p * exp (lh - (ei - m - ln T)) - p) with (p * (exp (lh - (ei - m - ln T)) - 1))
      by ring.
    rewrite Rabs_mult, Rabs_pos_eq by lra. apply Rmult_le_compat_l; [lra |].
    apply Rabs_le; lra. }
  apply Rabs_le_inv in H2.
  assert (H3 : exp_rel * exp lh <= exp_rel * (p * exp D)) by (apply Rmult_le_compat_l; lra).
  apply Rabs_le. fold D. split; lra.
Qed.

(* -- the printed statements ------------------------------------------------------------ *)

(* A summation tree of depth d: the bound with γ_d. *)
Theorem T12_max_shift_depth : T12_max_shift_depth_statement.
Proof.
  unfold T12_max_shift_depth_statement, T12_max_shift_depth_in.
  intros prec emin choice Hp exp_fl es e_max e_i t d exp_rel exp_abs n u tiny T mean_gap p_i
    gap_i depth Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth Hd Hn Hu Htiny HT Hg Hpi Hgap
    Hdu HnE HuE.
  replace (mean_gap * u) with (u * mean_gap) in HnE by ring.
  subst n u tiny depth p_i gap_i.
  assert (Hcore := t12_core prec emin choice exp_fl es e_max e_i t d exp_rel exp_abs T mean_gap
    Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu ltac:(lra) ltac:(lra)).
  cbv zeta in Hcore.
  destruct Hcore as (Hf & H01 & Hb). split; [exact Hf | split; [exact H01 |]].
  eapply Rle_trans; [exact Hb |]. right.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (Hu := fr_u_bounds prec Hp).
  assert (HB := exp_pos (bpow radix2 (- prec) * mean_gap)).
  assert (Hrel1 : 0 < 1 - exp_rel - INR (length es) * exp_abs * exp (bpow radix2 (- prec) * mean_gap))
    by lra.
  unfold T12_max_shift_bound, T12_gamma. rewrite !exp_plus.
  replace ((e_max - e_i) * bpow radix2 (- prec)) with (bpow radix2 (- prec) * (e_max - e_i)) by ring.
  replace (mean_gap * bpow radix2 (- prec)) with (bpow radix2 (- prec) * mean_gap) by ring.
  field. repeat split; lra.
Qed.

(* Any summation order: a tree of n leaves has depth at most n − 1, so γ_{n−1}. *)
Theorem T12_max_shift : T12_max_shift_statement.
Proof.
  unfold T12_max_shift_statement, T12_max_shift_in.
  intros prec emin choice Hp exp_fl es e_max e_i t exp_rel exp_abs n u tiny T mean_gap p_i gap_i
    Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hn Hu Htiny HT Hg Hpi Hgap Hnu HnE HuE.
  assert (Hlen : length (leaves t) = length es)
    by (rewrite (Permutation_length Hperm), map_length; reflexivity).
  assert (Hes : (1 <= length es)%nat) by (rewrite <- Hlen; apply fr_leaves_nonempty).
  apply (T12_max_shift_depth prec emin choice Hp exp_fl es e_max e_i t (length es - 1)%nat
    exp_rel exp_abs n u tiny T mean_gap p_i gap_i (n - 1)); try assumption.
  - rewrite <- Hlen. apply fr_depth_le.
  - rewrite Hn, minus_INR by exact Hes. simpl. ring.
  - lra.
Qed.

(* The reciprocal form, a tree of depth d. *)
Theorem T12_reciprocal_depth : T12_reciprocal_depth_statement.
Proof.
  unfold T12_reciprocal_depth_statement, T12_reciprocal_depth_in.
  intros prec emin choice Hp exp_fl es e_max e_i t d exp_rel exp_abs n u tiny T mean_gap p_i
    gap_i depth Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth Hd Hn Hu Htiny HT Hg Hpi Hgap
    Hdu HnE HuE Hnorm.
  replace (mean_gap * u) with (u * mean_gap) in HnE by ring.
  subst n u tiny depth p_i gap_i.
  assert (Hu := fr_u_bounds prec Hp).
  assert (HG : INR d * bpow radix2 (- prec) / (- INR d * bpow radix2 (- prec) + 1) + 1
               = 1 + INR d * bpow radix2 (- prec) / (1 - INR d * bpow radix2 (- prec)))
    by (field; lra).
  rewrite HG in Hnorm.
  assert (Hcore := t12_reciprocal_core prec emin choice exp_fl es e_max e_i t d exp_rel exp_abs
    T mean_gap Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hdepth HT Hg Hdu ltac:(lra) ltac:(lra)
    ltac:(lra)).
  cbv zeta in Hcore.
  destruct Hcore as (Hf & H0 & Hb). split; [exact Hf | split; [exact H0 |]].
  eapply Rle_trans; [exact Hb |]. right.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (HB := exp_pos (bpow radix2 (- prec) * mean_gap)).
  assert (Hrel1 : 0 < 1 - exp_rel - INR (length es) * exp_abs * exp (bpow radix2 (- prec) * mean_gap))
    by lra.
  unfold T12_reciprocal_bound, T12_gamma. rewrite !exp_plus.
  replace ((e_max - e_i) * bpow radix2 (- prec)) with (bpow radix2 (- prec) * (e_max - e_i)) by ring.
  replace (mean_gap * bpow radix2 (- prec)) with (bpow radix2 (- prec) * mean_gap) by ring.
  field. repeat split; lra.
Qed.

(* The reciprocal form, any summation order. *)
Theorem T12_reciprocal : T12_reciprocal_statement.
Proof.
  unfold T12_reciprocal_statement, T12_reciprocal_in.
  intros prec emin choice Hp exp_fl es e_max e_i t exp_rel exp_abs n u tiny T mean_gap p_i gap_i
    Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hn Hu Htiny HT Hg Hpi Hgap Hnu HnE HuE Hnorm.
  assert (Hlen : length (leaves t) = length es)
    by (rewrite (Permutation_length Hperm), map_length; reflexivity).
  assert (Hes : (1 <= length es)%nat) by (rewrite <- Hlen; apply fr_leaves_nonempty).
  apply (T12_reciprocal_depth prec emin choice Hp exp_fl es e_max e_i t (length es - 1)%nat
    exp_rel exp_abs n u tiny T mean_gap p_i gap_i (n - 1)); try assumption.
  - rewrite <- Hlen. apply fr_depth_le.
  - rewrite Hn, minus_INR by exact Hes. simpl. ring.
  - lra.
  - eapply Rle_trans; [| exact Hnorm]. right. field. lra.
Qed.

(* Exp of the log-softmax, a tree of depth d. *)
Theorem T12_exp_log_depth : T12_exp_log_depth_statement.
Proof.
  unfold T12_exp_log_depth_statement, T12_exp_log_depth_in.
  intros prec emin choice Hp exp_fl es e_max e_i t log_fl d exp_rel exp_abs n u tiny T mean_gap
    p_i gap_i log_rel log_abs log_sum depth Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla
    Hdepth Hd Hn Hu Htiny HT Hg Hpi Hgap Hls Hdu HnE.
  replace (mean_gap * u) with (u * mean_gap) in HnE by ring.
  subst n u tiny depth p_i gap_i log_sum.
  assert (Hu := fr_u_bounds prec Hp).
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (HB := exp_pos (bpow radix2 (- prec) * mean_gap)).
  assert (HC := exp_pos (4 * INR (length es) * bpow radix2 (- prec) ^ 2 / (1 - bpow radix2 (- prec)) ^ 2)).
  assert (Hnn := pos_INR (length es)).
  assert (HX1 : 0 < 1 - exp_rel - INR (length es) * exp_abs * exp (bpow radix2 (- prec) * mean_gap))
    by lra.
  assert (Hd0 := pos_INR d).
  unfold T12_exp_log_bound, T12_gamma.
  replace (mean_gap * bpow radix2 (- prec)) with (bpow radix2 (- prec) * mean_gap) by ring.
  set (MA := Rmax _ _).
  assert (Hcore := t12_exp_log_core prec emin choice exp_fl log_fl es e_max e_i t d exp_rel exp_abs
    log_rel log_abs T mean_gap MA Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla Hdepth HT Hg
    Hdu ltac:(lra)).
  cbv zeta in Hcore.
  destruct Hcore as (Hf & H0 & Hb).
  - unfold MA. eapply Rle_trans; [| apply Rmax_l]. right. f_equal. field. repeat split; lra.
  - unfold MA. eapply Rle_trans; [| apply Rmax_r]. right. f_equal. field. lra.
  - split; [exact Hf | split; [exact H0 |]].
    eapply Rle_trans; [exact Hb |]. right.
    match goal with
    | |- _ * (_ * exp ?a - 1) + _ = _ + _ * (_ * exp ?b - 1) => replace a with b by ring
    end.
    ring.
Qed.

(* Exp of the log-softmax, any summation order. *)
Theorem T12_exp_log : T12_exp_log_statement.
Proof.
  unfold T12_exp_log_statement, T12_exp_log_in.
  intros prec emin choice Hp exp_fl es e_max e_i t log_fl exp_rel exp_abs n u tiny T mean_gap
    p_i gap_i log_rel log_abs log_sum Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla
    Hn Hu Htiny HT Hg Hpi Hgap Hls Hnu HnE.
  assert (Hlen : length (leaves t) = length es)
    by (rewrite (Permutation_length Hperm), map_length; reflexivity).
  assert (Hes : (1 <= length es)%nat) by (rewrite <- Hlen; apply fr_leaves_nonempty).
  apply (T12_exp_log_depth prec emin choice Hp exp_fl es e_max e_i t log_fl (length es - 1)%nat
    exp_rel exp_abs n u tiny T mean_gap p_i gap_i log_rel log_abs log_sum (n - 1));
    try assumption.
  - rewrite <- Hlen. apply fr_depth_le.
  - rewrite Hn, minus_INR by exact Hes. simpl. ring.
  - lra.
Qed.

(* The log-sum-exp first, a tree of depth d. *)
Theorem T12_exp_lse_depth : T12_exp_lse_depth_statement.
Proof.
  unfold T12_exp_lse_depth_statement, T12_exp_lse_depth_in.
  intros prec emin choice Hp exp_fl es e_max e_i t log_fl d exp_rel exp_abs n u tiny T mean_gap
    p_i gap_i log_rel log_abs log_sum top depth Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla
    Htop Hdepth Hd Hn Hu Htiny HT Hg Hpi Hgap Hls Hdu HnE.
  replace (mean_gap * u) with (u * mean_gap) in HnE by ring.
  subst n u tiny depth p_i gap_i log_sum.
  assert (Hu := fr_u_bounds prec Hp).
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (HB := exp_pos (bpow radix2 (- prec) * mean_gap)).
  assert (HC := exp_pos (4 * INR (length es) * bpow radix2 (- prec) ^ 2 / (1 - bpow radix2 (- prec)) ^ 2)).
  assert (Hnn := pos_INR (length es)).
  assert (HX1 : 0 < 1 - exp_rel - INR (length es) * exp_abs * exp (bpow radix2 (- prec) * mean_gap))
    by lra.
  assert (Hd0 := pos_INR d).
  unfold T12_exp_lse_bound, T12_gamma.
  replace (mean_gap * bpow radix2 (- prec)) with (bpow radix2 (- prec) * mean_gap) by ring.
  set (MA := Rmax _ _).
  assert (Hcore := t12_exp_lse_core prec emin choice exp_fl log_fl es e_max e_i t d exp_rel exp_abs
    log_rel log_abs T mean_gap MA top Hp Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla Htop Hdepth HT Hg
    Hdu ltac:(lra)).
  cbv zeta in Hcore.
  destruct Hcore as (Hf & H0 & Hb).
  - unfold MA. eapply Rle_trans; [| apply Rmax_l]. right. f_equal. field. repeat split; lra.
  - unfold MA. eapply Rle_trans; [| apply Rmax_r]. right. f_equal. field. lra.
  - split; [exact Hf | split; [exact H0 |]].
    eapply Rle_trans; [exact Hb |]. right.
    match goal with
    | |- _ * (_ * exp ?a - 1) + _ = _ + _ * (_ * exp ?b - 1) => replace a with b by ring
    end.
    ring.
Qed.

(* The log-sum-exp first, any summation order. *)
Theorem T12_exp_lse : T12_exp_lse_statement.
Proof.
  unfold T12_exp_lse_statement, T12_exp_lse_in.
  intros prec emin choice Hp exp_fl es e_max e_i t log_fl exp_rel exp_abs n u tiny T mean_gap
    p_i gap_i log_rel log_abs log_sum top Hfl Hm Hmax Hi Hexp Hrel Habs Hperm Hlog Hlr Hla Htop
    Hn Hu Htiny HT Hg Hpi Hgap Hls Hnu HnE.
  assert (Hlen : length (leaves t) = length es)
    by (rewrite (Permutation_length Hperm), map_length; reflexivity).
  assert (Hes : (1 <= length es)%nat) by (rewrite <- Hlen; apply fr_leaves_nonempty).
  apply (T12_exp_lse_depth prec emin choice Hp exp_fl es e_max e_i t log_fl (length es - 1)%nat
    exp_rel exp_abs n u tiny T mean_gap p_i gap_i log_rel log_abs log_sum top (n - 1));
    try assumption.
  - rewrite <- Hlen. apply fr_depth_le.
  - rewrite Hn, minus_INR by exact Hes. simpl. ring.
  - lra.
Qed.

(* The hypotheses hold together (no theorem above is vacuous): two equal logits, the
   correctly rounded exp (exp_rel = u, exp_abs = 2^emin / 2), one rounded addition. *)
Theorem T12_max_shift_satisfiable : T12_max_shift_satisfiable_statement.
Proof.
  unfold T12_max_shift_satisfiable_statement.
  intros prec emin choice Hp He.
  set (exp_fl := fun x => fl prec emin choice (exp x)).
  assert (Hexp := fr_correctly_rounded_exp prec emin choice Hp ltac:(lia)). fold exp_fl in Hexp.
  assert (Hu := fr_u_bounds prec Hp).
  assert (Hs : 0 < bpow radix2 emin <= / 2).
  { split; [apply bpow_gt_0 |].
    replace (/ 2) with (bpow radix2 (-1)) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
    apply bpow_le; lia. }
  assert (H1 : exp_fl (fl prec emin choice (0 - 0)) = 1)
    by (replace (0 - 0) with 0 by ring; rewrite fr_fl_0; apply Hexp).
  exists exp_fl, (0 :: 0 :: nil), 0, 0, (Node (Leaf 1) (Leaf 1)),
    (bpow radix2 (- prec)), (bpow radix2 emin / 2), 2, (bpow radix2 (- prec)),
    (bpow radix2 emin), 2, 0, (1 / 2), 0.
  assert (HT : fold_right Rplus 0 (map (fun e : R => exp (e - 0)) (0 :: 0 :: nil)) = 2)
    by (simpl; rewrite Rminus_0_r, exp_0; ring).
  destruct Hexp as [Hexp0 Hexpx].
  repeat split.
  - intros e [<- | [<- | []]]; apply fr_is_float_0.
  - left; reflexivity.
  - intros e [<- | [<- | []]]; lra.
  - left; reflexivity.
  - exact Hexp0.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - simpl. rewrite H1. apply Permutation_refl.
  - rewrite HT; reflexivity.
  - simpl. ring.
  - replace (0 - 0) with 0 by ring. rewrite exp_0. field.
  - ring.
  - lra.
  - rewrite Rmult_0_l, exp_0. lra.
  - nra.
Qed.

(* The reciprocal form's hypotheses hold together too (the same witness; 1/S is a
   normal float since 2^emin <= u/2). *)
Theorem T12_reciprocal_satisfiable : T12_reciprocal_satisfiable_statement.
Proof.
  unfold T12_reciprocal_satisfiable_statement.
  intros prec emin choice Hp He.
  set (exp_fl := fun x => fl prec emin choice (exp x)).
  assert (Hexp := fr_correctly_rounded_exp prec emin choice Hp ltac:(lia)). fold exp_fl in Hexp.
  assert (Hu := fr_u_bounds prec Hp).
  assert (Hs : 0 < bpow radix2 emin <= / 2).
  { split; [apply bpow_gt_0 |].
    replace (/ 2) with (bpow radix2 (-1)) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
    apply bpow_le; lia. }
  assert (H1 : exp_fl (fl prec emin choice (0 - 0)) = 1)
    by (replace (0 - 0) with 0 by ring; rewrite fr_fl_0; apply Hexp).
  exists exp_fl, (0 :: 0 :: nil), 0, 0, (Node (Leaf 1) (Leaf 1)),
    (bpow radix2 (- prec)), (bpow radix2 emin / 2), 2, (bpow radix2 (- prec)),
    (bpow radix2 emin), 2, 0, (1 / 2), 0.
  assert (HT : fold_right Rplus 0 (map (fun e : R => exp (e - 0)) (0 :: 0 :: nil)) = 2)
    by (simpl; rewrite Rminus_0_r, exp_0; ring).
  destruct Hexp as [Hexp0 Hexpx].
  repeat split.
  - intros e [<- | [<- | []]]; apply fr_is_float_0.
  - left; reflexivity.
  - intros e [<- | [<- | []]]; lra.
  - left; reflexivity.
  - exact Hexp0.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - simpl. rewrite H1. apply Permutation_refl.
  - rewrite HT; reflexivity.
  - simpl. ring.
  - replace (0 - 0) with 0 by ring. rewrite exp_0. field.
  - ring.
  - lra.
  - rewrite Rmult_0_l, exp_0. lra.
  - replace (2 * (bpow radix2 emin / 2) * bpow radix2 (- prec) * (bpow radix2 (- prec) + 1))
      with (bpow radix2 emin * (bpow radix2 (- prec) * (bpow radix2 (- prec) + 1))) by field.
    rewrite <- (Rmult_1_r (bpow radix2 emin)) at 2. apply Rmult_le_compat_l; [lra | nra].
  - (* 1/S is normal: 2 (1/(1 − u)) (tiny/2 + u + 1) <= 4 <= 2u/tiny, as tiny <= u/2 *)
    assert (Hst : bpow radix2 emin <= bpow radix2 (- prec) / 2).
    { rewrite <- fr_bpow_pred. apply bpow_le; lia. }
    set (v := bpow radix2 (- prec)) in *. set (s := bpow radix2 emin) in *.
    replace (v * (2 - 1) / (- v * (2 - 1) + 1) + 1) with (/ (1 - v)) by (field; lra).
    assert (Hinv : / (1 - v) <= 4 / 3).
    { apply (Rmult_le_reg_r (1 - v)); [lra |]. rewrite Rinv_l by lra. lra. }
    assert (Hinv0 : 0 < / (1 - v)) by (apply Rinv_0_lt_compat; lra).
    assert (H4 : 4 <= 2 * v / s).
    { apply (Rmult_le_reg_r s); [lra |]. replace (2 * v / s * s) with (2 * v) by (field; lra). lra. }
    assert (2 * / (1 - v) * (s / 2 + v + 1) <= 4) by nra.
    lra.
Qed.

(* Exp of the log-softmax: its hypotheses hold together (the same witness, and the
   correctly rounded log). *)
Theorem T12_exp_log_satisfiable : T12_exp_log_satisfiable_statement.
Proof.
  unfold T12_exp_log_satisfiable_statement.
  intros prec emin choice Hp He.
  set (exp_fl := fun x => fl prec emin choice (exp x)).
  assert (Hexp := fr_correctly_rounded_exp prec emin choice Hp ltac:(lia)). fold exp_fl in Hexp.
  assert (Hu := fr_u_bounds prec Hp).
  assert (Hs : 0 < bpow radix2 emin <= / 2).
  { split; [apply bpow_gt_0 |].
    replace (/ 2) with (bpow radix2 (-1)) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
    apply bpow_le; lia. }
  assert (H1 : exp_fl (fl prec emin choice (0 - 0)) = 1)
    by (replace (0 - 0) with 0 by ring; rewrite fr_fl_0; apply Hexp).
  assert (Hlog := fr_correctly_rounded_log prec emin choice Hp).
  exists exp_fl, (0 :: 0 :: nil), 0, 0, (Node (Leaf 1) (Leaf 1)),
    (fun y => fl prec emin choice (ln y)),
    (bpow radix2 (- prec)), (bpow radix2 emin / 2), 2, (bpow radix2 (- prec)),
    (bpow radix2 emin), 2, 0, (1 / 2), 0, (bpow radix2 (- prec)), (bpow radix2 emin / 2), (ln 2).
  assert (HT : fold_right Rplus 0 (map (fun e : R => exp (e - 0)) (0 :: 0 :: nil)) = 2)
    by (simpl; rewrite Rminus_0_r, exp_0; ring).
  destruct Hexp as [Hexp0 Hexpx].
  repeat split.
  - intros e [<- | [<- | []]]; apply fr_is_float_0.
  - left; reflexivity.
  - intros e [<- | [<- | []]]; lra.
  - left; reflexivity.
  - exact Hexp0.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - simpl. rewrite H1. apply Permutation_refl.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - rewrite HT; reflexivity.
  - simpl. ring.
  - replace (0 - 0) with 0 by ring. rewrite exp_0. field.
  - ring.
  - lra.
  - rewrite Rmult_0_l, exp_0. lra.
Qed.

(* The log-sum-exp first: its hypotheses hold together (the same witness, top = 0). *)
Theorem T12_exp_lse_satisfiable : T12_exp_lse_satisfiable_statement.
Proof.
  unfold T12_exp_lse_satisfiable_statement.
  intros prec emin choice Hp He.
  set (exp_fl := fun x => fl prec emin choice (exp x)).
  assert (Hexp := fr_correctly_rounded_exp prec emin choice Hp ltac:(lia)). fold exp_fl in Hexp.
  assert (Hu := fr_u_bounds prec Hp).
  assert (Hs : 0 < bpow radix2 emin <= / 2).
  { split; [apply bpow_gt_0 |].
    replace (/ 2) with (bpow radix2 (-1)) by (simpl; rewrite IZR_Zpower_pos; simpl; field).
    apply bpow_le; lia. }
  assert (H1 : exp_fl (fl prec emin choice (0 - 0)) = 1)
    by (replace (0 - 0) with 0 by ring; rewrite fr_fl_0; apply Hexp).
  assert (Hlog := fr_correctly_rounded_log prec emin choice Hp).
  exists exp_fl, (0 :: 0 :: nil), 0, 0, (Node (Leaf 1) (Leaf 1)),
    (fun y => fl prec emin choice (ln y)),
    (bpow radix2 (- prec)), (bpow radix2 emin / 2), 2, (bpow radix2 (- prec)),
    (bpow radix2 emin), 2, 0, (1 / 2), 0, (bpow radix2 (- prec)), (bpow radix2 emin / 2), (ln 2), 0.
  assert (HT : fold_right Rplus 0 (map (fun e : R => exp (e - 0)) (0 :: 0 :: nil)) = 2)
    by (simpl; rewrite Rminus_0_r, exp_0; ring).
  destruct Hexp as [Hexp0 Hexpx].
  repeat split.
  - intros e [<- | [<- | []]]; apply fr_is_float_0.
  - left; reflexivity.
  - intros e [<- | [<- | []]]; lra.
  - left; reflexivity.
  - exact Hexp0.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hexpx x ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - simpl. rewrite H1. apply Permutation_refl.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact A.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact B.
  - destruct (Hlog y ltac:(assumption) ltac:(assumption)) as (A & B & C); exact C.
  - lra.
  - lra.
  - rewrite Rabs_R0. lra.
  - rewrite HT; reflexivity.
  - simpl. ring.
  - replace (0 - 0) with 0 by ring. rewrite exp_0. field.
  - ring.
  - lra.
  - rewrite Rmult_0_l, exp_0. lra.
Qed.

(* The IEEE 754 formats, ties to even: instances of the generic theorems. *)
Theorem T12_binary64 : T12_binary64_statement.
Proof.
  refine (conj _ (conj _ (conj _ (conj _ (conj _ (conj _ (conj _ _)))))));
    [apply T12_max_shift | apply T12_max_shift_depth | apply T12_reciprocal |
     apply T12_reciprocal_depth | apply T12_exp_log | apply T12_exp_log_depth |
     apply T12_exp_lse | apply T12_exp_lse_depth]; reflexivity.
Qed.

Theorem T12_binary32 : T12_binary32_statement.
Proof.
  refine (conj _ (conj _ (conj _ (conj _ (conj _ (conj _ (conj _ _)))))));
    [apply T12_max_shift | apply T12_max_shift_depth | apply T12_reciprocal |
     apply T12_reciprocal_depth | apply T12_exp_log | apply T12_exp_log_depth |
     apply T12_exp_lse | apply T12_exp_lse_depth]; reflexivity.
Qed.

Theorem T12 : T12_statement.
Proof.
  exact (conj T12_max_shift (conj T12_max_shift_depth (conj T12_max_shift_satisfiable
    (conj T12_reciprocal (conj T12_reciprocal_depth (conj T12_reciprocal_satisfiable
    (conj T12_exp_log (conj T12_exp_log_depth (conj T12_exp_log_satisfiable
    (conj T12_exp_lse (conj T12_exp_lse_depth (conj T12_exp_lse_satisfiable
    (conj T12_binary64 T12_binary32))))))))))))).
Qed.
