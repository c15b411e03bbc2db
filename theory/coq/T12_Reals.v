(* T12, real analysis: list sums, Jensen's inequality for exp, and the bound on the sum
   of exp-terms whose arguments were rounded (the "tilted" sum).
   Hand-written; no axiom, no Flocq. *)
From Coq Require Import Reals List Lra Psatz Permutation.
Open Scope R_scope.

(* -- list sums ------------------------------------------------------------------- *)

Lemma fs_sum_nonneg (f : R -> R) (l : list R) :
  (forall x, In x l -> 0 <= f x) -> 0 <= fold_right Rplus 0 (map f l).
Proof.
  induction l as [|x l IH]; intros H; cbn [map fold_right]; [lra |].
  assert (Hx := H x (or_introl eq_refl)).
  assert (0 <= fold_right Rplus 0 (map f l)) by (apply IH; intros y Hy; apply H; now right).
  lra.
Qed.

Lemma fs_sum_le (f g : R -> R) (l : list R) :
  (forall x, In x l -> f x <= g x) ->
  fold_right Rplus 0 (map f l) <= fold_right Rplus 0 (map g l).
Proof.
  induction l as [|x l IH]; intros H; cbn [map fold_right]; [lra |].
  assert (Hx := H x (or_introl eq_refl)).
  assert (fold_right Rplus 0 (map f l) <= fold_right Rplus 0 (map g l))
    by (apply IH; intros y Hy; apply H; now right).
  lra.
Qed.

Lemma fs_sum_ext (f g : R -> R) (l : list R) :
  (forall x, In x l -> f x = g x) ->
  fold_right Rplus 0 (map f l) = fold_right Rplus 0 (map g l).
Proof.
  intros H; apply Rle_antisym; apply fs_sum_le; intros x Hx; rewrite (H x Hx); lra.
Qed.

Lemma fs_sum_scale (f : R -> R) (l : list R) (a : R) :
  fold_right Rplus 0 (map (fun x => a * f x) l) = a * fold_right Rplus 0 (map f l).
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma fs_sum_plus (f g : R -> R) (l : list R) :
  fold_right Rplus 0 (map (fun x => f x + g x) l)
  = fold_right Rplus 0 (map f l) + fold_right Rplus 0 (map g l).
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma fs_sum_const (l : list R) (c : R) :
  fold_right Rplus 0 (map (fun _ => c) l) = INR (length l) * c.
Proof.
  induction l as [|x l IH]; cbn [map fold_right length]; [simpl; ring |].
  rewrite IH, S_INR; ring.
Qed.

Lemma fs_sum_in_le (f : R -> R) (l : list R) (y : R) :
  (forall x, In x l -> 0 <= f x) -> In y l -> f y <= fold_right Rplus 0 (map f l).
Proof.
  induction l as [|x l IH]; intros H Hy; [destruct Hy |]; cbn [map fold_right].
  assert (Hx := H x (or_introl eq_refl)).
  assert (Hl : 0 <= fold_right Rplus 0 (map f l)) by (apply fs_sum_nonneg; intros z Hz; apply H; now right).
  destruct Hy as [<- | Hy]; [lra |].
  assert (f y <= fold_right Rplus 0 (map f l)) by (apply IH; [intros z Hz; apply H; now right | exact Hy]).
  lra.
Qed.

Lemma fs_perm_sum (l l' : list R) :
  Permutation l l' -> fold_right Rplus 0 l = fold_right Rplus 0 l'.
Proof.
  induction 1; cbn [fold_right]; try lra.
Qed.

Lemma fs_sum_map (f : R -> R) (l : list R) :
  fold_right Rplus 0 (map f l) = fold_right Rplus 0 (map (fun x => x) (map f l)).
Proof. now rewrite map_id. Qed.

(* -- exp ------------------------------------------------------------------------- *)

(* exp lies above its tangent at m. *)
Lemma fs_exp_tangent (m z : R) : exp m * (1 + (z - m)) <= exp z.
Proof.
  replace (exp z) with (exp m * exp (z - m)) by (rewrite <- exp_plus; f_equal; ring).
  apply Rmult_le_compat_l; [apply Rlt_le, exp_pos | apply exp_ineq1_le].
Qed.

(* Jensen: exp of a weighted mean is at most the weighted mean of exp. *)
Lemma fs_jensen_exp (q z : R -> R) (l : list R) :
  (forall x, In x l -> 0 <= q x) -> fold_right Rplus 0 (map q l) = 1 ->
  exp (fold_right Rplus 0 (map (fun x => q x * z x) l))
  <= fold_right Rplus 0 (map (fun x => q x * exp (z x)) l).
Proof.
  intros Hq H1.
  set (m := fold_right Rplus 0 (map (fun x => q x * z x) l)).
  apply Rle_trans with
    (fold_right Rplus 0 (map (fun x => exp m * q x + exp m * (q x * z x) + (- (exp m * m)) * q x) l)).
  - rewrite !fs_sum_plus, !fs_sum_scale. fold m. rewrite H1. lra.
  - apply fs_sum_le. intros x Hx.
    assert (Ht := fs_exp_tangent m (z x)).
    assert (0 <= q x) by (apply Hq; exact Hx).
    nra.
Qed.

(* e^y − 1 <= y e^y for y >= 0. *)
Lemma fs_expm1_le (y : R) : exp y <= 1 + y * exp y.
Proof.
  assert (H := exp_ineq1_le (- y)).
  assert (Hy : exp y * exp (- y) = 1) by (rewrite <- exp_plus; replace (y + - y) with 0 by ring; apply exp_0).
  assert (0 < exp y) by apply exp_pos.
  nra.
Qed.

(* g² e^{−a g} <= 4/a² for a > 0, g >= 0: e^{a g} = (e^{a g/2})² >= (a g/2)². *)
Lemma fs_square_exp_le (a g : R) :
  0 < a -> 0 <= g -> g ^ 2 * exp (- (a * g)) <= 4 / a ^ 2.
Proof.
  intros Ha Hg.
  assert (Hh := exp_ineq1_le (a * g / 2)).
  assert (Hsq : exp (a * g) = exp (a * g / 2) * exp (a * g / 2))
    by (rewrite <- exp_plus; f_equal; field).
  assert (Hinv : exp (- (a * g)) * exp (a * g) = 1)
    by (rewrite <- exp_plus; replace (- (a * g) + a * g) with 0 by ring; apply exp_0).
  assert (He : 0 < exp (- (a * g))) by apply exp_pos.
  assert (Hag : 0 <= a * g / 2) by (apply Rmult_le_pos; [apply Rmult_le_pos | ]; lra).
  assert (Hbig : (a * g / 2) ^ 2 <= exp (a * g)) by (rewrite Hsq; nra).
  apply (Rmult_le_reg_r (a ^ 2)); [nra |].
  replace (4 / a ^ 2 * a ^ 2) with 4 by (field; apply Rgt_not_eq; exact Ha).
  replace (g ^ 2 * exp (- (a * g)) * a ^ 2) with (4 * ((a * g / 2) ^ 2 * exp (- (a * g)))) by field.
  nra.
Qed.

Lemma fs_exp_le (x y : R) : x <= y -> exp x <= exp y.
Proof.
  intros H; destruct (Rle_lt_or_eq_dec x y H) as [Hlt | ->];
    [apply Rlt_le, exp_increasing, Hlt | apply Rle_refl].
Qed.

Lemma fs_exp_ge_1 (x : R) : 0 <= x -> 1 <= exp x.
Proof. intros H. rewrite <- exp_0. apply fs_exp_le, H. Qed.

Lemma fs_exp_inv (x : R) : exp (- x) * exp x = 1.
Proof. rewrite <- exp_plus; replace (- x + x) with 0 by ring; apply exp_0. Qed.

Lemma fs_ln_le (x y : R) : 0 < x -> x <= y -> ln x <= ln y.
Proof.
  intros Hx H; destruct (Rle_lt_or_eq_dec x y H) as [Hlt | ->];
    [apply Rlt_le, ln_increasing; assumption | apply Rle_refl].
Qed.

(* |e^Δ − 1| <= e^D − 1 when |Δ| <= D. *)
Lemma fs_expm1_abs (delta d : R) : Rabs delta <= d -> Rabs (exp delta - 1) <= exp d - 1.
Proof.
  intros H0.
  assert (H : - d <= delta <= d).
  { assert (H1 := Rle_abs delta). assert (H2 := Rle_abs (- delta)). rewrite Rabs_Ropp in H2. lra. }
  assert (Hd : exp delta <= exp d) by (apply fs_exp_le; lra).
  assert (Hm : exp (- d) <= exp delta) by (apply fs_exp_le; lra).
  assert (Hinv := fs_exp_inv d).
  assert (He := exp_pos d). assert (He' := exp_pos (- d)).
  (* e^{−d} + e^{d} >= 2 *)
  assert (H2 : 2 <= exp (- d) + exp d).
  { assert (0 <= (exp d - 1) * (exp d - 1)) by (apply Rle_0_sqr).
    apply (Rmult_le_reg_r (exp d)); [exact He |].
    replace ((exp (- d) + exp d) * exp d) with (exp (- d) * exp d + exp d * exp d) by ring.
    rewrite Hinv. nra. }
  apply Rabs_le. split; lra.
Qed.


(* -- the exact sum of the max-shifted terms -------------------------------------- *)

(* T = Σ exp(e − m) >= 1: the maximum contributes exp 0 = 1. *)
Lemma fs_shifted_sum_ge_1 (es : list R) (m : R) :
  In m es -> 1 <= fold_right Rplus 0 (map (fun e => exp (e - m)) es).
Proof.
  intros Hm.
  replace 1 with (exp (m - m)) by (replace (m - m) with 0 by ring; apply exp_0).
  apply (fs_sum_in_le (fun e => exp (e - m))); [intros; apply Rlt_le, exp_pos | exact Hm].
Qed.

(* With every argument moved down by u times its gap, the sum falls by at most the factor
   exp(−u·ḡ), ḡ the softmax-weighted mean gap (Jensen). *)
Lemma fs_tilted_lower (es : list R) (m u T gbar : R) :
  In m es ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  T * exp (- (u * gbar))
  <= fold_right Rplus 0 (map (fun e => exp (e - m) * exp (- (u * (m - e)))) es).
Proof.
  intros Hm HT Hg.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  assert (Hq : forall e, In e es -> 0 <= exp (e - m) / T)
    by (intros; apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (Hq1 : fold_right Rplus 0 (map (fun e => exp (e - m) / T) es) = 1).
  { unfold Rdiv. rewrite (fs_sum_ext _ (fun e => / T * exp (e - m))) by (intros; ring).
    rewrite fs_sum_scale, <- HT. field. lra. }
  assert (HJ := fs_jensen_exp (fun e => exp (e - m) / T) (fun e => - (u * (m - e))) es Hq Hq1).
  cbv beta in HJ.
  rewrite (fs_sum_ext (fun e => exp (e - m) / T * - (u * (m - e))) (fun e => (- u) * (exp (e - m) / T * (m - e)))) in HJ
    by (intros; ring).
  rewrite fs_sum_scale, <- Hg in HJ.
  rewrite (fs_sum_ext (fun e => exp (e - m) / T * exp (- (u * (m - e))))
             (fun e => / T * (exp (e - m) * exp (- (u * (m - e)))))) in HJ by (intros; unfold Rdiv; ring).
  rewrite fs_sum_scale in HJ.
  replace (- u * gbar) with (- (u * gbar)) in HJ by ring.
  apply (Rmult_le_compat_l T) in HJ; [| lra].
  replace (T * (/ T * fold_right Rplus 0 (map (fun e => exp (e - m) * exp (- (u * (m - e)))) es)))
    with (fold_right Rplus 0 (map (fun e => exp (e - m) * exp (- (u * (m - e)))) es)) in HJ
    by (field; lra).
  exact HJ.
Qed.

(* With every argument moved up by u times its gap, the sum grows by at most the factor
   exp(u·ḡ + 4 n u²/(1 − u)²): Jensen under the tilted weights, whose mean gap exceeds ḡ
   by at most 4 n u/(1 − u)² (g² e^{−(1−u) g} <= 4/(1−u)²). *)
Lemma fs_tilted_upper (es : list R) (m u T gbar : R) :
  In m es -> (forall e, In e es -> e <= m) -> 0 <= u < 1 ->
  T = fold_right Rplus 0 (map (fun e => exp (e - m)) es) ->
  gbar = fold_right Rplus 0 (map (fun e => exp (e - m) / T * (m - e)) es) ->
  fold_right Rplus 0 (map (fun e => exp (e - m) * exp (u * (m - e))) es)
  <= T * exp (u * gbar + 4 * INR (length es) * u ^ 2 / (1 - u) ^ 2).
Proof.
  intros Hm Hmax Hu HT Hg.
  assert (HT1 : 1 <= T) by (rewrite HT; apply fs_shifted_sum_ge_1, Hm).
  set (a := 1 - u).
  assert (Ha : 0 < a) by (unfold a; lra).
  set (W := fold_right Rplus 0 (map (fun e => exp (- (a * (m - e)))) es)).
  assert (HW : fold_right Rplus 0 (map (fun e => exp (e - m) * exp (u * (m - e))) es) = W).
  { unfold W; apply fs_sum_ext; intros e _. rewrite <- exp_plus; f_equal; unfold a; ring. }
  rewrite HW.
  assert (HTW : T <= W).
  { rewrite HT; unfold W; apply fs_sum_le; intros e He.
    apply fs_exp_le. assert (Hle := Hmax e He). unfold a. nra. }
  assert (HW0 : 0 < W) by lra.
  set (q := fun e => exp (- (a * (m - e))) / W).
  assert (Hq : forall e, In e es -> 0 <= q e)
    by (intros; unfold q; apply Rmult_le_pos; [apply Rlt_le, exp_pos | apply Rlt_le, Rinv_0_lt_compat; lra]).
  assert (Hq1 : fold_right Rplus 0 (map q es) = 1).
  { unfold q, Rdiv. rewrite (fs_sum_ext _ (fun e => / W * exp (- (a * (m - e))))) by (intros; ring).
    rewrite fs_sum_scale. fold W. field. lra. }
  set (Q := fold_right Rplus 0 (map (fun e => q e * (m - e)) es)).
  assert (HJ := fs_jensen_exp q (fun e => - (u * (m - e))) es Hq Hq1).
  cbv beta in HJ.
  rewrite (fs_sum_ext (fun e => q e * - (u * (m - e))) (fun e => (- u) * (q e * (m - e)))) in HJ
    by (intros; ring).
  rewrite fs_sum_scale in HJ. fold Q in HJ.
  rewrite (fs_sum_ext (fun e => q e * exp (- (u * (m - e)))) (fun e => / W * exp (e - m))) in HJ.
  2:{ intros e _. unfold q, Rdiv. rewrite Rmult_comm, <- Rmult_assoc, <- exp_plus.
      replace (- (u * (m - e)) + - (a * (m - e))) with (e - m) by (unfold a; ring). ring. }
  rewrite fs_sum_scale, <- HT in HJ.
  (* HJ : exp (− u Q) <= T / W, so W <= T exp(u Q). *)
  assert (HWQ : W <= T * exp (u * Q)).
  { assert (Hinv := fs_exp_inv (u * Q)).
    replace (- u * Q) with (- (u * Q)) in HJ by ring.
    assert (HE : 0 < exp (u * Q)) by apply exp_pos.
    apply (Rmult_le_compat_r (W * exp (u * Q))) in HJ; [| nra].
    replace (/ W * T * (W * exp (u * Q))) with (T * exp (u * Q)) in HJ by (field; lra).
    replace (exp (- (u * Q)) * (W * exp (u * Q))) with (W * (exp (- (u * Q)) * exp (u * Q))) in HJ by ring.
    rewrite Hinv in HJ. lra. }
  (* The tilted mean gap Q exceeds ḡ by at most 4 n u/(1 − u)². *)
  set (K := 4 * INR (length es) * u / a ^ 2).
  assert (HK : 0 <= K).
  { unfold K. apply Rmult_le_pos; [apply Rmult_le_pos; [apply Rmult_le_pos; [lra | apply pos_INR] | lra] |].
    apply Rlt_le, Rinv_0_lt_compat; nra. }
  assert (Hterm : forall e, In e es ->
            exp (- (a * (m - e))) * (m - e) <= exp (e - m) * (m - e) + u * (4 / a ^ 2)).
  { intros e He. assert (Hg0 : 0 <= m - e) by (assert (Hle := Hmax e He); lra).
    assert (Hsplit : exp (- (a * (m - e))) = exp (e - m) * exp (u * (m - e)))
      by (rewrite <- exp_plus; f_equal; unfold a; ring).
    assert (H1 := fs_expm1_le (u * (m - e))).
    assert (H2 := fs_square_exp_le a (m - e) Ha Hg0).
    assert (He0 : 0 < exp (e - m)) by apply exp_pos.
    assert (Hu0 : 0 <= u * (m - e)) by nra.
    (* exp(−a g) g = e^{−g} e^{ug} g <= e^{−g} g + u g² e^{−a g} *)
    assert (Hstep : exp (- (a * (m - e))) * (m - e)
                    <= exp (e - m) * (m - e) + u * ((m - e) ^ 2 * exp (- (a * (m - e))))).
    { rewrite Hsplit.
      assert (Hmul : exp (e - m) * (m - e) * exp (u * (m - e))
                     <= exp (e - m) * (m - e) * (1 + u * (m - e) * exp (u * (m - e))))
        by (apply Rmult_le_compat_l; [nra | lra]).
      nra. }
    assert (u * ((m - e) ^ 2 * exp (- (a * (m - e)))) <= u * (4 / a ^ 2))
      by (apply Rmult_le_compat_l; lra).
    lra. }
  assert (HQ : Q <= gbar + K).
  { assert (HQW : Q = / W * fold_right Rplus 0 (map (fun e => exp (- (a * (m - e))) * (m - e)) es)).
    { unfold Q. rewrite <- fs_sum_scale. apply fs_sum_ext; intros e _; unfold q, Rdiv; ring. }
    assert (Hnum0 : 0 <= fold_right Rplus 0 (map (fun e => exp (- (a * (m - e))) * (m - e)) es)).
    { apply fs_sum_nonneg; intros e He. assert (Hle := Hmax e He).
      apply Rmult_le_pos; [apply Rlt_le, exp_pos | lra]. }
    assert (Hsum := fs_sum_le _ _ es Hterm). cbv beta in Hsum.
    rewrite fs_sum_plus, fs_sum_const in Hsum.
    assert (HTg : fold_right Rplus 0 (map (fun e => exp (e - m) * (m - e)) es) = T * gbar).
    { rewrite Hg, <- fs_sum_scale. apply fs_sum_ext; intros e _. field. lra. }
    rewrite HTg in Hsum.
    set (N := fold_right Rplus 0 (map (fun e => exp (- (a * (m - e))) * (m - e)) es)) in *.
    assert (HQ1 : Q <= N / T).
    { rewrite HQW. unfold Rdiv. rewrite Rmult_comm. apply Rmult_le_compat_l; [lra |].
      apply Rinv_le_contravar; lra. }
    assert (HNT : N / T <= gbar + K).
    { apply (Rmult_le_reg_r T); [lra |].
      replace (N / T * T) with N by (field; lra).
      assert (HKT : INR (length es) * (u * (4 / a ^ 2)) = K) by (unfold K; field; lra).
      assert (K <= K * T) by nra.
      nra. }
    lra. }
  apply Rle_trans with (T * exp (u * Q)); [exact HWQ |].
  apply Rmult_le_compat_l; [lra |]. apply fs_exp_le.
  assert (HuK : u * K = 4 * INR (length es) * u ^ 2 / a ^ 2) by (unfold K; field; lra).
  assert (u * Q <= u * (gbar + K)) by (apply Rmult_le_compat_l; lra).
  lra.
Qed.
