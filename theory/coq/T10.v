(* T10: under length scaling β = s·log n the spike's top coefficient is
   n^{sδ}/(n^{sδ}+n−1), which tends to 1, 1/2, 0 as sδ = 1+q, 1, 1−q (q > 0); with a gap
   Δ between the top logit and every other, p_max >= 1/(1 + (n−1) n^{−sΔ}).
   Covers: the spike's top coefficient under β = s·ln n is n^{sδ}/(n^{sδ}+n−1);
     n^{1+q}/(n^{1+q}+n−1) -> 1 and n^{1−q}/(n^{1−q}+n−1) -> 0 for every q > 0, and
     n/(2n−1) -> 1/2; and p_max >= 1/(1+(n−1)n^{−sΔ}) for every list of other logits at
     least Δ below the top one.
   Leaves out: the tie between the three limits and s·δ: they are stated for a free q (the
     regimes sδ = 1 ± q) and for sδ = 1 by its value, not as lim p_max(n) under a
     hypothesis on s·δ, which the sympy kernel cannot state yet; the paper's form for a
     real exponent a = sδ is proved as the lemma spike_limit_regimes of Limits.v, whose
     statement is hand-written. *)
From Coq Require Import Reals List Lra Psatz.
From Coquelicot Require Import Coquelicot.
From SoftmaxDispersion Require Import Statements Lemmas Limits.
Open Scope R_scope.

Theorem T10 : T10_statement.
Proof.
  unfold T10_statement.
  intros Delta M S m n q s l Hlen HS Hn Hs Hq Hgap.
  split; [| split; [| split; [| split]]].
  - (* sδ = 1: n/(2n − 1) -> 1/2 *)
    apply is_lim_ext with (fun x => (1 * x + 0) / (2 * x + - 1)).
    + intro x. f_equal; ring.
    + apply lim_ratio. lra.
  - (* sδ = 1 + q > 1: the paper's regime "sδ > 1" at the exponent q + 1 *)
    apply (proj1 (spike_limit_regimes (q + 1))). lra.
  - (* sδ = 1 − q < 1: the regime "sδ < 1" at the exponent 1 − q *)
    apply (proj2 (proj2 (spike_limit_regimes (1 - q)))). lra.
  - (* the gap floor: each other term is at most exp(M s ln n) / n^{sΔ} *)
    assert (Hln : 0 < ln n) by (rewrite <- ln_1; apply ln_increasing; lra).
    set (E := exp (M * s * ln n)).
    set (P := Rpower n (Delta * s)).
    assert (HE : 0 < E) by apply exp_pos.
    assert (HP : 0 < P) by (unfold P, Rpower; apply exp_pos).
    assert (Hterm : forall x, In x l -> exp (x * s * ln n) <= E / P).
    { intros x Hx. unfold E, P, Rpower, Rdiv. rewrite <- exp_Ropp, <- exp_plus.
      apply exp_le_of_le. specialize (Hgap x Hx).
      assert (0 < s * ln n) by (apply Rmult_lt_0_compat; lra).
      replace (x * s * ln n) with (x * (s * ln n)) by ring.
      replace (M * s * ln n + - (Delta * s * ln n)) with ((- Delta + M) * (s * ln n)) by ring.
      apply Rmult_le_compat_r; lra. }
    assert (HSb : S <= (n - 1) * (E / P)).
    { rewrite HS, <- Hlen. apply sum_map_upper. exact Hterm. }
    assert (HS0 : 0 <= S).
    { rewrite HS. clear. induction l as [|x l IH]; cbn [map fold_right]; [lra |].
      pose proof (exp_pos (x * s * ln n)). lra. }
    apply Rle_ge. apply frac_le.
    + assert (0 < (n - 1) / P) by (apply Rdiv_lt_0_compat; lra). lra.
    + lra.
    + replace ((n - 1) / P) with ((n - 1) * (E / P) / E) by (field; lra).
      assert (E * (1 + (n - 1) * (E / P) / E) = E + (n - 1) * (E / P)) by (field; lra).
      lra.
  - (* the spike: exp(M s ln n) = n^{s(M−m)} exp(m s ln n) *)
    set (A := exp (m * s * ln n)). set (B := exp (M * s * ln n)).
    assert (HA : 0 < A) by apply exp_pos.
    assert (HP : Rpower n (s * (M - m)) = B / A).
    { unfold Rpower, A, B. replace (s * (M - m) * ln n) with (M * s * ln n + - (m * s * ln n))
        by ring. rewrite exp_plus, exp_Ropp. reflexivity. }
    rewrite HP. assert (0 < B / A) by (unfold B; apply Rdiv_lt_0_compat; [apply exp_pos | lra]).
    assert (0 < B) by apply exp_pos.
    field. split; [lra | nra].
Qed.
