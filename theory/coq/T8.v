(* T8: dot-product logits e = (Qy)ᵀ(Kx)/s spread by at most 2 σ_q σ_k ‖y‖ R / s, from
   Cauchy–Schwarz and ‖Ax‖ <= σ ‖x‖ at the two keys where the largest and the smallest
   logit are attained.
   Covers: δ = e_max − e_min <= 2 σ_q σ_k ‖y‖ R / s for any σ_q, σ_k that bound the
     operator norms (‖Qy‖ <= σ_q ‖y‖, ‖Kx‖ <= σ_k ‖x‖), any R >= ‖x_i‖, ‖x_j‖ and s > 0,
     given |(Qy)ᵀ(Kx)| <= ‖Qy‖ ‖Kx‖ at both keys.
   Leaves out: vectors and matrices: the norms and dot products are real numbers, and
     Cauchy–Schwarz and the operator-norm bounds are hypotheses, not proved for vectors. *)
From Coq Require Import Reals Lra Psatz.
From SoftmaxDispersion Require Import Statements.
Open Scope R_scope.

(* One key: |dot| <= ‖Kx‖ ‖Qy‖ <= (σ_k R)(σ_q ‖y‖) =: B. *)
Lemma dot_bound (dot Kx Qy x R sk sq y : R) :
  0 <= Kx -> 0 <= Qy -> 0 <= sk -> Qy <= sq * y -> Kx <= x * sk -> x <= R ->
  - Kx * Qy <= dot -> dot <= Kx * Qy ->
  - (sk * sq * R * y) <= dot <= sk * sq * R * y.
Proof.
  intros HK HQ Hsk HQy HKx HxR Hlo Hhi.
  assert (HKR : Kx <= R * sk) by nra.
  assert (Hprod : Kx * Qy <= (R * sk) * (sq * y)).
  { apply Rmult_le_compat; lra. }
  split; nra.
Qed.

Theorem T8 : T8_statement.
Proof.
  unfold T8_statement.
  intros delta dot_i dot_j e_max e_min Kxi Kxj Qy xi xj s sk sq R y
    Hs Hsq Hsk Hy HQy HQ Hmax HKi Hxi HCSi HCSi' HKxi HxiR
    Hmin HKj Hxj HCSj HCSj' HKxj HxjR Hdelta.
  pose proof (dot_bound dot_i Kxi Qy xi R sk sq y (Rge_le _ _ HKi) (Rge_le _ _ HQy) (Rge_le _ _ Hsk)
    HQ HKxi HxiR HCSi HCSi') as [_ Hi].
  pose proof (dot_bound dot_j Kxj Qy xj R sk sq y (Rge_le _ _ HKj) (Rge_le _ _ HQy) (Rge_le _ _ Hsk)
    HQ HKxj HxjR HCSj HCSj') as [Hj _].
  assert (Hspread : dot_i - dot_j <= 2 * (sk * sq * R * y)) by lra.
  assert (Hfinal : delta <= 2 * sk * sq * R * y / s).
  { rewrite Hdelta, Hmax, Hmin.
    replace (dot_i / s - dot_j / s) with ((dot_i - dot_j) / s) by (field; lra).
    apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat; lra |]. lra. }
  exact Hfinal.
Qed.
