(* T2, the paper's Lemma 2.1: c/(c+n−1) <= c/n and 1/(1+(n−1)c) >= 1/(nc), c = exp(δ/θ).
   Covers: c/(c+n−1) <= c/n and 1/(1+(n−1)c) >= exp(−δ/θ)/n for every real n >= 1, δ >= 0
     and θ > 0, the paper's Lemma 2.1 form of T1's bounds.
   Leaves out: the coefficients themselves: they enter through T1, which these two
     expressions bound. *)
From Coq Require Import Reals Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas.
Open Scope R_scope.

Theorem T2 : T2_statement.
Proof.
  unfold T2_statement. intros delta n theta Htheta Hdelta Hn.
  set (c := exp (delta / theta)).
  assert (Hc : 1 <= c).
  { unfold c. rewrite <- exp_0. apply exp_le_of_le.
    unfold Rdiv. apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]. }
  assert (Hinv : exp (- delta / theta) = / c).
  { unfold c. rewrite <- exp_Ropp. f_equal. unfold Rdiv. ring. }
  rewrite Hinv. split.
  - apply Rle_ge. replace (/ c / n) with (1 / (c * n)) by (field; lra).
    apply frac_le; nra.
  - apply frac_le; [lra | lra | nra].
Qed.
