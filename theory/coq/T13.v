(* T13, its deterministic part: the top weight of a set and Bernstein's band.
   Covers: the top weight is 1/(1 + S) with S = Σ exp(e_j − e_top) over the n − 1 others,
     0 <= S <= n − 1 when no other logit exceeds the top one, Bernstein's radius r (with
     L = ln(2/η)) solves (n−1) r² = L (2σ² + 2br/3) so the tail bound 2 exp(−q) at r is
     exactly η, and wherever (n−1)(I_mean − r) <= S <= (n−1)(I_mean + r) the top weight and
     1/(1 + (n−1) I_mean) lie in [1/(1 + (n−1)(I_mean + r)), 1/(1 + (n−1) max(I_mean − r, 0))].
   Leaves out: the probability: that this event has probability >= 1 − η (Bernstein's
     inequality for i.i.d. terms in [0, b] with variance <= σ²) is the sympy claim's
     cited premise, not kernel-checked; no Coq library packaged for Debian's Coq 8.16
     proves Bernstein's or Hoeffding's inequality. *)
From Coq Require Import Reals List Lra Psatz.
From SoftmaxDispersion Require Import Statements Lemmas ListSums.
Open Scope R_scope.

(* 1/(1 + a) <= 1/(1 + b) when 0 <= b <= a. *)
Lemma inv_one_plus_le (a b : R) : 0 <= b -> b <= a -> 1 / (a + 1) <= 1 / (b + 1).
Proof. intros Hb Hab. apply frac_le; lra. Qed.

Theorem T13 : T13_statement.
Proof.
  unfold T13_statement.
  intros I_mean L S T b e_top eta n q r s2 l Hlen HS HT HL Hr Hq Hn Heta0 Heta1 Hs2 Hb HI
    Hlo Hhi Hmember.
  assert (Hm : 1 <= n - 1) by lra.
  (* every term exp(e_j − e_top) lies in (0, 1] *)
  assert (HS1 : S <= n - 1).
  { rewrite HS, <- Hlen, <- (Rmult_1_r (INR (length l))). apply lsum_upper.
    intros x Hx. rewrite <- exp_0. apply exp_le_of_le. specialize (Hmember x Hx). lra. }
  assert (HS0 : 0 <= S).
  { rewrite HS. apply lsum_nonneg. intros x _. left. apply exp_pos. }
  (* L = ln(2/η) > 0, so r > 0 and r solves (n−1) r² = L (2σ² + 2br/3) *)
  assert (HL0 : 0 < L).
  { rewrite HL, <- ln_1. apply ln_increasing; [lra |].
    apply (Rmult_lt_reg_r eta); [lra |]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l; lra. }
  set (D := L ^ 2 * b ^ 2 / 9 + L * s2 * (2 * n - 2)) in Hr.
  assert (HD : 0 <= D) by (unfold D; assert (0 <= L * s2) by nra; nra).
  assert (Hsq := sqrt_sqrt D HD). assert (Hsq0 := sqrt_pos D).
  assert (Hmr : (n - 1) * r = L * b / 3 + sqrt D) by (rewrite Hr; field; lra).
  assert (Hr0 : 0 < r).
  { assert (0 < (n - 1) * r) by (rewrite Hmr; nra). nra. }
  assert (Hroot : (n - 1) * r ^ 2 = L * (2 * s2 + 2 * b * r / 3)).
  { assert (Hsq' : ((n - 1) * r - L * b / 3) ^ 2 = D) by (rewrite Hmr; nra).
    unfold D in Hsq'. apply (Rmult_eq_reg_l (n - 1)); [| lra]. nra. }
  assert (Hq' : q = L).
  { rewrite Hq. apply (Rmult_eq_reg_r (2 * b * r / 3 + 2 * s2)); [| nra].
    unfold Rdiv at 1. rewrite Rmult_assoc, Rinv_l by nra. lra. }
  (* the top weight is 1/(S + 1): T = exp(e_top) S *)
  assert (HTS : T = exp e_top * S).
  { rewrite HT, HS, <- lsum_scal. apply lsum_ext. intros x _.
    rewrite <- exp_plus. f_equal. ring. }
  assert (Hweight : exp e_top / (T + exp e_top) = 1 / (S + 1)).
  { rewrite HTS. pose proof (exp_pos e_top). assert (0 < exp e_top * S + exp e_top) by nra. field. split; lra. }
  (* max(I_mean − r, 0) (n − 1) <= S, and <= I_mean (n − 1) *)
  assert (Hmax : (n - 1) * Rmax 0 (I_mean - r) <= S).
  { unfold Rmax. destruct (Rle_dec 0 (I_mean - r)); lra. }
  assert (Hmax0 : 0 <= Rmax 0 (I_mean - r)) by apply Rmax_l.
  assert (HmaxI : Rmax 0 (I_mean - r) <= I_mean) by (apply Rmax_lub; lra).
  split; [| split; [| split; [| split; [| split; [| split]]]]].
  - exact HS1.
  - rewrite Hq', HL, exp_Ropp, exp_ln by (apply Rdiv_lt_0_compat; lra). field. lra.
  - exact Hweight.
  - rewrite Hweight. apply inv_one_plus_le; lra.
  - replace (I_mean * (n - 1)) with ((n - 1) * I_mean) by ring.
    apply inv_one_plus_le; nra.
  - rewrite Hweight. apply inv_one_plus_le; nra.
  - replace (I_mean * (n - 1)) with ((n - 1) * I_mean) by ring.
    apply inv_one_plus_le; nra.
Qed.
