(* T1: with logits in [m, M] and c = exp((M−m)/θ), every coefficient lies in
   [1/(1+(n−1)c), c/(c+n−1)]; the dip and the spike attain the two ends.
   Covers: for any θ > 0, logits e_k and a list of n − 1 others in [m, M], the coefficient
     of e_k lies in [1/(1+(n−1)c), c/(c+n−1)] with c = exp((M−m)/θ), and the dip and the
     spike attain the two ends.
   Leaves out: nothing of the sympy claim; n is the real number one more than the list's
     length. *)
From Coq Require Import Reals List Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas.
Open Scope R_scope.

Theorem T1 : T1_statement.
Proof.
  unfold T1_statement.
  intros M S e_k m n theta l Hlen HS Htheta Hn Hmk HkM Hmj HjM.
  assert (Ht0 : theta <> 0) by lra.
  rewrite (exp_spread M m theta Ht0).
  set (a := exp (m / theta)) in *. set (b := exp (M / theta)) in *.
  set (t := exp (e_k / theta)) in *.
  assert (Ha : 0 < a) by apply exp_pos.
  assert (Hb : 0 < b) by apply exp_pos.
  assert (Ht : 0 < t) by apply exp_pos.
  assert (Hat : a <= t) by (apply exp_le_of_le, div_le_div_pos; lra).
  assert (Htb : t <= b) by (apply exp_le_of_le, div_le_div_pos; lra).
  (* The n − 1 other terms each lie in [a, b]. *)
  assert (HSab : (n - 1) * a <= S <= (n - 1) * b).
  { rewrite HS, <- Hlen. apply sum_map_bounds. intros x Hx.
    split; apply exp_le_of_le, div_le_div_pos; try lra; [apply Hmj | apply HjM]; exact Hx. }
  set (c := b / a).
  assert (Hcb : b = c * a) by (unfold c; field; lra).
  assert (Hc : 0 < c) by (unfold c; apply Rdiv_lt_0_compat; lra).
  assert (Hm1 : 0 <= n - 1) by lra.
  assert (H1 : 0 <= (n - 1) * c * (t - a)) by (apply Rmult_le_pos; [apply Rmult_le_pos |]; lra).
  assert (H2 : 0 <= (n - 1) * (b - t)) by (apply Rmult_le_pos; lra).
  split; [| split; [| split]].
  - (* lower end: S <= (n−1) b = (n−1) c a <= (n−1) c t *)
    apply frac_le; nra.
  - (* upper end: t (n − 1) <= (n−1) b = c (n−1) a <= c S *)
    apply frac_le; nra.
  - (* the dip: one logit at m, n − 1 at M *)
    rewrite Hcb. field. split; nra.
  - (* the spike: one logit at M, n − 1 at m *)
    rewrite Hcb. field. split; nra.
Qed.
