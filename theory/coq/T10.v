(* T10: under length scaling β = s·log n the spike's top coefficient is
   p_max(n) = n^{sδ}/(n^{sδ}+n−1), whose limit is 1, 1/2, 0 as sδ >, =, < 1; with a gap
   Δ between the top logit and every other, p_max >= 1/(1 + (n−1) n^{−sΔ}).
   Covers: the spike's top coefficient under β = s·ln n is n^{sδ}/(n^{sδ}+n−1) with
     δ = M − m; lim p_max(n) = 1 if s(M − m) > 1, 1/2 if s(M − m) = 1 and 0 if
     s(M − m) < 1, each the limit over the real n -> ∞ (Coquelicot's is_lim) of p_max
     itself under its hypothesis on s·δ; and p_max >= 1/(1+(n−1)n^{−sΔ}) for every list
     of other logits at least Δ below the top one.
   Leaves out: nothing of the sympy claim; a limit over the reals gives the one over set
     sizes. *)
From Coq Require Import Reals List Lra Psatz.
From Coquelicot Require Import Coquelicot.
From SoftmaxDispersion Require Import Statements Lemmas Limits.
Open Scope R_scope.

Theorem T10 : T10_statement.
Proof.
  unfold T10_statement.
  intros Delta M S m n s l Hlen HS Hn Hs Hgap.
  pose proof (spike_limit_regimes (s * (M - m))) as [Habove [Hat Hbelow]].
  split; [| split; [| split; [| split]]].
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
  - (* sδ = 1: the lemma at the exponent s(M − m) *)
    exact Hat.
  - (* sδ > 1 *)
    exact Habove.
  - (* sδ < 1 *)
    exact Hbelow.
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
