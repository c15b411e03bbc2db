(* Small facts about finite sums, fractions, exp and ln that the proofs share.
   Hand-written; nothing here is an axiom. *)
From Coq Require Import Reals List Lra Psatz.
Open Scope R_scope.

(* Termwise bounds on a list sum add up: |l| lo <= Σ f <= |l| hi. *)
Lemma sum_map_bounds (f : R -> R) (l : list R) (lo hi : R) :
  (forall x, In x l -> lo <= f x <= hi) ->
  INR (length l) * lo <= fold_right Rplus 0 (map f l) <= INR (length l) * hi.
Proof.
  induction l as [|x l IH]; intros Hb; cbn [length map fold_right].
  - simpl; lra.
  - rewrite S_INR.
    assert (Hx := Hb x (or_introl eq_refl)).
    assert (Hl : forall y, In y l -> lo <= f y <= hi)
      by (intros y Hy; apply Hb; right; exact Hy).
    specialize (IH Hl). lra.
Qed.

(* The same with only an upper or only a lower bound. *)
Lemma sum_map_upper (f : R -> R) (l : list R) (hi : R) :
  (forall x, In x l -> f x <= hi) ->
  fold_right Rplus 0 (map f l) <= INR (length l) * hi.
Proof.
  induction l as [|x l IH]; intros Hb; cbn [length map fold_right].
  - simpl; lra.
  - rewrite S_INR.
    assert (Hx := Hb x (or_introl eq_refl)).
    assert (Hl : forall y, In y l -> f y <= hi)
      by (intros y Hy; apply Hb; right; exact Hy).
    specialize (IH Hl). lra.
Qed.

Lemma sum_map_le (f g : R -> R) (l : list R) :
  (forall x, In x l -> f x <= g x) ->
  fold_right Rplus 0 (map f l) <= fold_right Rplus 0 (map g l).
Proof.
  induction l as [|x l IH]; intros Hb; cbn [length map fold_right].
  - lra.
  - assert (Hx := Hb x (or_introl eq_refl)).
    assert (Hl : forall y, In y l -> f y <= g y)
      by (intros y Hy; apply Hb; right; exact Hy).
    specialize (IH Hl). lra.
Qed.

Lemma sum_map_scale (f : R -> R) (l : list R) (a : R) :
  fold_right Rplus 0 (map (fun x => a * f x) l) = a * fold_right Rplus 0 (map f l).
Proof. induction l as [|x l IH]; cbn [length map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma frac_le (a b c d : R) : 0 < b -> 0 < d -> a * d <= c * b -> a / b <= c / d.
Proof.
  intros Hb Hd H. apply (Rmult_le_reg_r (b * d)); [nra |].
  replace (a / b * (b * d)) with (a * d) by (field; lra).
  replace (c / d * (b * d)) with (c * b) by (field; lra).
  exact H.
Qed.

Lemma frac_lt (a b c d : R) : 0 < b -> 0 < d -> a * d < c * b -> a / b < c / d.
Proof.
  intros Hb Hd H. apply (Rmult_lt_reg_r (b * d)); [nra |].
  replace (a / b * (b * d)) with (a * d) by (field; lra).
  replace (c / d * (b * d)) with (c * b) by (field; lra).
  exact H.
Qed.

Lemma exp_le_of_le (x y : R) : x <= y -> exp x <= exp y.
Proof.
  intros [H | H]; [left; apply exp_increasing; exact H | right; rewrite H; reflexivity].
Qed.

Lemma ln_le_of_le (x y : R) : 0 < x -> x <= y -> ln x <= ln y.
Proof.
  intros Hx [H | H]; [left; apply ln_increasing; assumption | right; rewrite H; reflexivity].
Qed.

Lemma div_le_div_pos (x y t : R) : 0 < t -> x <= y -> x / t <= y / t.
Proof.
  intros Ht H. unfold Rdiv. apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat |]; lra.
Qed.

(* exp((M - m)/θ) = exp(M/θ) / exp(m/θ). *)
Lemma exp_spread (M m theta : R) :
  theta <> 0 -> exp ((M - m) / theta) = exp (M / theta) / exp (m / theta).
Proof.
  intros Ht. replace ((M - m) / theta) with (M / theta + - (m / theta)) by (field; exact Ht).
  rewrite exp_plus, exp_Ropp. reflexivity.
Qed.

Lemma frac_le_const (a b e : R) : 0 < b -> a <= e * b -> a / b <= e.
Proof.
  intros Hb H. apply (Rmult_le_reg_r b); [exact Hb |].
  replace (a / b * b) with a by (field; lra). exact H.
Qed.

Lemma const_lt_frac (a b e : R) : 0 < b -> e * b < a -> e < a / b.
Proof.
  intros Hb H. apply (Rmult_lt_reg_r b); [exact Hb |].
  replace (a / b * b) with a by (field; lra). exact H.
Qed.

Lemma sum_map_mul_r (f : R -> R) (l : list R) (a : R) :
  fold_right Rplus 0 (map (fun x => f x * a) l) = fold_right Rplus 0 (map f l) * a.
Proof. induction l as [|x l IH]; cbn [map fold_right]; [ring | rewrite IH; ring]. Qed.

Lemma sum_map_nonneg (f : R -> R) (l : list R) :
  (forall x, In x l -> 0 <= f x) -> 0 <= fold_right Rplus 0 (map f l).
Proof.
  induction l as [|x l IH]; intros Hb; cbn [map fold_right]; [lra |].
  assert (Hx := Hb x (or_introl eq_refl)).
  assert (Hl : forall y, In y l -> 0 <= f y) by (intros y Hy; apply Hb; right; exact Hy).
  specialize (IH Hl). lra.
Qed.

Lemma ln_div_pos (x y : R) : 0 < x -> 0 < y -> ln (x / y) = ln x - ln y.
Proof.
  intros Hx Hy. unfold Rdiv. rewrite ln_mult, ln_Rinv; [ring | exact Hy | exact Hx |].
  apply Rinv_0_lt_compat. exact Hy.
Qed.
