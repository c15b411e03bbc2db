(* T10: under length scaling β = s·log n the spike's top coefficient is
   n^{sδ}/(n^{sδ}+n−1), which tends to 1, 1/2, 0 as sδ = 1+q, 1, 1−q (q > 0); with a gap
   Δ between the top logit and every other, p_max >= 1/(1 + (n−1) n^{−sΔ}). *)
From Coq Require Import Reals List Lra Psatz.
From Coquelicot Require Import Coquelicot.
From SoftmaxDispersion Require Import Statements Lemmas Limits.
Open Scope R_scope.

Theorem T10 : T10_statement.
Proof.
  unfold T10_statement.
  intros Delta M S m n q s l Hlen HS Hn Hs Hq Hgap.
  set (u := fun x => Rpower x (- q)).
  assert (Hu : is_lim u p_infty 0) by exact (lim_rpower_neg q Hq).
  assert (Hu0 : forall x, 0 < u x) by (intro x; unfold u, Rpower; apply exp_pos).
  split; [| split; [| split; [| split]]].
  - (* sδ = 1: n/(2n − 1) -> 1/2 *)
    apply is_lim_ext with (fun x => (1 * x + 0) / (2 * x + - 1)).
    + intro x. f_equal; ring.
    + apply lim_ratio. lra.
  - (* sδ = 1 + q: x^{q+1}/(x + x^{q+1} − 1) = 1/(1 + u − u/x) -> 1 *)
    apply is_lim_ext_loc with (fun x => 1 / (1 + u x - u x * / x)).
    + apply (eventually_above 1). intros x Hx.
      rewrite rpower_succ by lra. fold (u x). pose proof (Hu0 x).
      assert (0 < u x * / x) by (apply Rmult_lt_0_compat; [| apply Rinv_0_lt_compat]; lra).
      assert (u x * / x < u x).
      { rewrite <- (Rmult_1_r (u x)) at 2. apply Rmult_lt_compat_l; [lra |].
        rewrite <- Rinv_1. apply Rinv_lt_contravar; lra. }
      field. repeat split; try lra. nra.
    + replace (Finite 1) with (Finite (1 / (1 + 0 - 0 * 0))) by (f_equal; field).
      apply lim_div_finite; [apply is_lim_const | | lra].
      apply is_lim_minus'; [apply is_lim_plus'; [apply is_lim_const | exact Hu] |].
      apply lim_mult_finite; [exact Hu | exact lim_inv_id].
  - (* sδ = 1 − q: x^{1−q}/(x + x^{1−q} − 1) = u/(1 + u − 1/x) -> 0 *)
    apply is_lim_ext_loc with (fun x => u x / (1 + u x - / x)).
    + apply (eventually_above 1). intros x Hx.
      rewrite rpower_one_minus by lra. fold (u x). pose proof (Hu0 x).
      assert (/ x < 1) by (rewrite <- Rinv_1; apply Rinv_lt_contravar; lra).
      field. repeat split; try lra. nra.
    + replace (Finite 0) with (Finite (0 / (1 + 0 - 0))) by (f_equal; field).
      apply lim_div_finite; [exact Hu | | lra].
      apply is_lim_minus'; [apply is_lim_plus'; [apply is_lim_const | exact Hu] |].
      exact lim_inv_id.
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
