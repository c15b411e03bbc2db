(* T6: the entropy of softmax is at least −log p_max >= log(c+n−1) − δ/θ >= log n − δ/θ.
   H = −p_k log p_k + H_others, where H_others sums p_j (−log p_j) over the n − 1 other
   logits; p_k is the largest weight (every other e_j <= e_k), so −log p_j >= −log p_k
   termwise, and the other weights add up to S/(S + t_k) = 1 − p_k; T1 bounds p_k.
   Covers: the Shannon entropy H of softmax over a list of logits in [m, M], e_k the
     largest, satisfies H >= −ln p_max >= ln(c+n−1) − δ/θ >= ln n − δ/θ.
   Leaves out: nothing of the sympy claim; H is defined by its sum over the list. *)
From Coq Require Import Reals List Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas T1.
Open Scope R_scope.

Theorem T6 : T6_statement.
Proof.
  unfold T6_statement.
  intros H Hoth M S e_k m n theta l Hlen HS HHo HH Htheta Hn Hmk HkM Hm1 HM1 Hk.
  destruct (T1 M S e_k m n theta l Hlen HS Htheta Hn Hmk HkM Hm1 HM1) as [_ [Hup _]].
  assert (Ht0 : theta <> 0) by lra.
  set (t := exp (e_k / theta)) in *.
  assert (Ht : 0 < t) by apply exp_pos.
  assert (HS0 : 0 <= S).
  { rewrite HS. apply sum_map_nonneg. intros x _. left. apply exp_pos. }
  set (D := S + t) in *.
  assert (HD : 0 < D) by (unfold D; lra).
  set (p := t / D) in *.
  assert (Hp : 0 < p) by (unfold p; apply Rdiv_lt_0_compat; lra).
  set (c := exp ((M - m) / theta)) in *.
  assert (Hc : 1 <= c).
  { unfold c. rewrite <- exp_0. apply exp_le_of_le.
    unfold Rdiv. apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]. }
  assert (Hd : 0 < n + c - 1) by lra.
  split; [| split].
  - (* H >= −log p_k *)
    apply Rle_ge.
    (* the other logits' terms, each at least p_j (−log p_k) *)
    assert (Hothers :
      fold_right Rplus 0 (map (fun x => exp (x / theta) / D * - ln p) l) <= Hoth).
    { rewrite HHo. apply sum_map_le. intros x Hx.
      set (q := exp (x / theta) / D).
      assert (Hq : 0 < q) by (unfold q; apply Rdiv_lt_0_compat; [apply exp_pos | lra]).
      assert (Hqp : q <= p).
      { unfold q, p. apply div_le_div_pos; [lra |].
        apply exp_le_of_le, div_le_div_pos; [lra | apply Hk; exact Hx]. }
      replace (- exp (x / theta) * ln q / D) with (q * - ln q) by (unfold q; field; lra).
      apply Rmult_le_compat_l; [lra |].
      pose proof (ln_le_of_le q p Hq Hqp). lra. }
    (* the other weights add up to S / D *)
    assert (Hweights : fold_right Rplus 0 (map (fun x => exp (x / theta) / D) l) = S / D).
    { unfold Rdiv. rewrite (sum_map_mul_r (fun x => exp (x * / theta))).
      rewrite HS. reflexivity. }
    rewrite (sum_map_mul_r (fun x => exp (x / theta) / D)), Hweights in Hothers.
    assert (Hsplit : H = Hoth + p * - ln p) by (rewrite HH; unfold p; field; lra).
    assert (Hone : S / D + p = 1) by (unfold p, D; field; lra).
    assert (Hlnp : - ln p * (S / D + p) = - ln p) by (rewrite Hone; ring).
    nra.
  - (* log(c + n − 1) >= log n *)
    apply Rle_ge. unfold Rminus. apply Rplus_le_compat_r.
    apply ln_le_of_le; lra.
  - (* −log p_k >= log(c + n − 1) − log c, by T1 *)
    apply Rle_ge.
    assert (Hln : ln p <= ln (c / (n + c - 1))).
    { apply ln_le_of_le; [exact Hp |]. unfold p, D. exact Hup. }
    rewrite ln_div_pos in Hln by first [lra | apply exp_pos].
    assert (Hlc : ln c = (M - m) / theta) by (unfold c; apply ln_exp). lra.
Qed.
