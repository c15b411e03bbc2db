(* T11: adaptive temperature.  With P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791
   (exact rationals) and β(H) = max(P(H), 1) for H > 1/2, else 1:
   - the roots of P − 1 in (0, 1) and (5, 6) lie in (0.848, 0.849) and (5.944, 5.945),
     and above H = 1/2, P > 1 exactly between them;
   - the root h_star of P' in (4, 5) lies in (4.41, 4.42), P peaks there, so
     1 <= β(H) <= P(h_star) for every H, and exp(β δ) <= exp(P(h_star) δ);
   - once log n − δ > −log(e^{−r_high} − 10⁻⁹), the rule's entropy exceeds r_high, so
     β = 1 exactly.
   Interval arithmetic (the interval tactic) decides the numerical signs.
   Covers: the adaptive temperature's β(H) = max(P(H), 1) (H > 1/2, else 1) satisfies 1 <=
     β <= P(h_star) with h_star the root of P' in (4, 5), P > 1 exactly between the roots
     of P − 1, and β = 1 once ln n − δ exceeds −ln(exp(−r_high) − 10⁻⁹), the roots pinned
     by their isolating facts.
   Leaves out: the decimal values of the roots and of β_max (about 2.4214): the statement
     names the roots by their polynomials and isolating intervals. *)
From Coq Require Import Reals List Lra Psatz.
From Interval Require Import Tactic.
From SoftmaxDispersion Require Import Statements Lemmas.
Open Scope R_scope.

(* The polynomial and the rule exactly as the statement prints them, so that the
   statement's terms are these definitions unfolded. *)
Definition P (x : R) : R :=
  - 37 * x ^ 4 / 1000 + 481 * x ^ 3 / 1000 - 23 * x ^ 2 / 10 + 4917 * x / 1000 - 1791 / 1000.
Definition beta (x : R) : R := if Rgt_dec x (1 / 2) then Rmax 1 (P x) else 1.
Definition dP (x : R) : R := - 37 * x ^ 3 / 250 + 1443 * x ^ 2 / 1000 - 23 * x / 5 + 4917 / 1000.

(* P(y) − P(x) = (y − x) D(x, y): strict monotonicity on a box where D has one sign. *)
Definition D (x y : R) : R :=
  - 37 * (y ^ 3 + y ^ 2 * x + y * x ^ 2 + x ^ 3) / 1000
  + 481 * (y ^ 2 + y * x + x ^ 2) / 1000 - 23 * (y + x) / 10 + 4917 / 1000.

Lemma P_diff (x y : R) : P y - P x = (y - x) * D x y.
Proof. unfold P, D. field. Qed.

Lemma P_increasing_low (x y : R) :
  848/1000 <= x <= 849/1000 -> 848/1000 <= y <= 849/1000 -> x < y -> P x < P y.
Proof.
  intros Hx Hy Hxy. assert (0 < D x y) by (unfold D; interval).
  pose proof (P_diff x y). nra.
Qed.

Lemma P_decreasing_high (x y : R) :
  5944/1000 <= x <= 5945/1000 -> 5944/1000 <= y <= 5945/1000 -> x < y -> P y < P x.
Proof.
  intros Hx Hy Hxy. assert (D x y < 0) by (unfold D; interval).
  pose proof (P_diff x y). nra.
Qed.

Lemma P_below_low (x : R) : 0 <= x <= 848/1000 -> P x < 1.
Proof. intros Hx. unfold P. interval with (i_bisect x, i_taylor x). Qed.

Lemma P_above_middle (x : R) : 849/1000 <= x <= 5944/1000 -> 1 < P x.
Proof. intros Hx. unfold P. interval with (i_bisect x, i_taylor x). Qed.

Lemma P_above_high_root (x : R) : 5945/1000 <= x <= 6 -> P x < 1.
Proof. intros Hx. unfold P. interval with (i_bisect x, i_taylor x). Qed.

(* Past 5.945 every Taylor coefficient of P − 1 is negative. *)
Lemma P_below_high (x : R) : 5945/1000 <= x -> P x < 1.
Proof.
  intros Hx. set (t := x - 5945/1000).
  assert (Ht : 0 <= t) by (unfold t; lra).
  assert (Hexp : P x - 1 = - 37/1000 * t ^ 4 - 19943/50000 * t ^ 3
    - 31350331/20000000 * t ^ 2 - 5053857803/2000000000 * t - 1936758317/1600000000000).
  { unfold t, P. field. }
  pose proof (pow_le t 2 Ht). pose proof (pow_le t 3 Ht). pose proof (pow_le t 4 Ht).
  lra.
Qed.

Lemma low_root (r : R) : P r = 1 -> 0 < r < 1 -> 848/1000 < r < 849/1000.
Proof.
  intros Hr Hb. split.
  - destruct (Rle_lt_dec r (848/1000)); [| lra].
    pose proof (P_below_low r ltac:(lra)). lra.
  - destruct (Rle_lt_dec (849/1000) r); [| lra].
    assert (1 < P r) by (unfold P; interval with (i_bisect r, i_taylor r)). lra.
Qed.

Lemma high_root (r : R) : P r = 1 -> 5 < r < 6 -> 5944/1000 < r < 5945/1000.
Proof.
  intros Hr Hb. split.
  - destruct (Rle_lt_dec r (5944/1000)); [| lra].
    assert (1 < P r) by (unfold P; interval with (i_bisect r, i_taylor r)). lra.
  - destruct (Rle_lt_dec (5945/1000) r); [| lra].
    pose proof (P_below_high r ltac:(lra)). lra.
Qed.

Lemma peak_root (h : R) : dP h = 0 -> 4 < h < 5 -> 441/100 < h < 442/100.
Proof.
  intros Hd Hb. split.
  - destruct (Rle_lt_dec h (441/100)); [| lra].
    assert (0 < dP h) by (unfold dP; interval with (i_bisect h, i_taylor h)). lra.
  - destruct (Rle_lt_dec (442/100) h); [| lra].
    assert (dP h < 0) by (unfold dP; interval with (i_bisect h, i_taylor h)). lra.
Qed.

(* Above 1/2, P > 1 exactly between the two roots. *)
Lemma sharpening (rl rh x : R) :
  848/1000 < rl < 849/1000 -> P rl = 1 -> 5944/1000 < rh < 5945/1000 -> P rh = 1 ->
  x > 1/2 -> (rh > x /\ rl < x <-> P x > 1).
Proof.
  intros Hl Hpl Hh Hph Hx. split.
  - intros [Hxh Hxl]. apply Rlt_gt.
    destruct (Rle_lt_dec x (849/1000)).
    + rewrite <- Hpl. apply P_increasing_low; lra.
    + destruct (Rle_lt_dec x (5944/1000)).
      * apply P_above_middle; lra.
      * rewrite <- Hph. apply P_decreasing_high; lra.
  - intros HP. split.
    + destruct (Rlt_le_dec x rh) as [| Hge]; [lra | exfalso].
      destruct (Rle_lt_dec x (5945/1000)).
      * destruct Hge as [Hgt | Heq].
        -- pose proof (P_decreasing_high rh x ltac:(lra) ltac:(lra) Hgt). lra.
        -- subst. lra.
      * pose proof (P_below_high x ltac:(lra)). lra.
    + destruct (Rlt_le_dec rl x) as [| Hle]; [lra | exfalso].
      destruct (Rle_lt_dec x (848/1000)).
      * pose proof (P_below_low x ltac:(lra)). lra.
      * destruct Hle as [Hlt | Heq].
        -- pose proof (P_increasing_low x rl ltac:(lra) ltac:(lra) Hlt). lra.
        -- subst. lra.
Qed.

(* P peaks at h: P(h) − P(x) = (x − h)² Q(x − h) with Q >= 0. *)
Lemma P_peak (h x : R) : dP h = 0 -> 441/100 < h < 442/100 -> P x <= P h.
Proof.
  intros Hd Hh. set (t := x - h).
  set (a := 111 * h ^ 2 / 500 - 1443 * h / 1000 + 23 / 10).
  set (b := 37 * h / 250 - 481 / 1000).
  assert (Htaylor : P h - P x = t ^ 2 * (a + b * t + 37/1000 * t ^ 2) - dP h * t).
  { unfold P, dP, t, a, b. field. }
  assert (Hdisc : 0 < 148/1000 * a - b ^ 2) by (unfold a, b; interval).
  assert (Hsq : 0 <= (74/1000 * t + b) ^ 2) by apply pow2_ge_0.
  assert (Hq : 148/1000 * (a + b * t + 37/1000 * t ^ 2)
               = (74/1000 * t + b) ^ 2 + (148/1000 * a - b ^ 2)) by field.
  assert (HQ : 0 <= a + b * t + 37/1000 * t ^ 2) by lra.
  assert (Ht2 : 0 <= t ^ 2) by apply pow2_ge_0.
  rewrite Hd, Rmult_0_l, Rminus_0_r in Htaylor.
  pose proof (Rmult_le_pos _ _ Ht2 HQ). lra.
Qed.

Lemma beta_ge_1 (x : R) : 1 <= beta x.
Proof. unfold beta. destruct (Rgt_dec x (1 / 2)); [apply Rmax_l | lra]. Qed.

Lemma beta_le_peak (h x : R) : dP h = 0 -> 441/100 < h < 442/100 -> beta x <= P h.
Proof.
  intros Hd Hh. assert (1 <= P h) by (unfold P; interval).
  unfold beta. destruct (Rgt_dec x (1 / 2)); [| lra].
  apply Rmax_lub; [lra | apply P_peak; assumption].
Qed.

Theorem T11 : T11_statement.
Proof.
  unfold T11_statement.
  intros H Ha W delta h n pmax rh rl l Hrl Hrl0 Hrl1 Hrh Hrh0 Hrh1 Hh Hh0 Hh1 Hlen HW HHa
    Hn Hdelta Hpmax0 Hpn HW1 Hthr Hp0 Hpmax.
  (* the coefficients add up to one *)
  assert (Hw : fold_right Rplus 0 (map (fun p => p) l) = 1) by (rewrite <- HW; exact HW1).
  assert (Hpl : P rl = 1) by (unfold P; lra).
  assert (Hph : P rh = 1) by (unfold P; lra).
  assert (Hdh : dP h = 0) by (unfold dP; lra).
  pose proof (low_root rl Hpl (conj Hrl0 Hrl1)) as Hl.
  pose proof (high_root rh Hph (conj Hrh0 Hrh1)) as Hhr.
  pose proof (peak_root h Hdh (conj Hh0 Hh1)) as Hpk.
  (* τ is real: exp(−r_high) > 10⁻⁹. *)
  assert (Hwell : - 1 / 1000000000 + exp (- rh) > 0) by interval.
  (* the rule's entropy exceeds r_high *)
  assert (Hentropy : Ha > rh).
  { set (w := - 1 / 1000000000 + exp (- rh)) in *.
    assert (Hn0 : 0 < n) by lra.
    assert (Hq : exp delta / n < w).
    { apply ln_lt_inv; [apply Rdiv_lt_0_compat; [apply exp_pos | lra] | lra |].
      unfold Rdiv. rewrite ln_mult, ln_Rinv, ln_exp by (try apply exp_pos; try apply Rinv_0_lt_compat; lra).
      lra. }
    assert (Hsum : 1 <= INR (length l) * pmax).
    { rewrite <- Hw. apply (sum_map_upper (fun p => p)). exact Hpmax. }
    pose proof (pos_INR (length l)).
    assert (Hpm0 : 0 < pmax) by nra.
    assert (Hln : ln (pmax + 1 / 1000000000) < - rh).
    { rewrite <- (ln_exp (- rh)). apply ln_increasing; [lra |].
      unfold w in Hq. lra. }
    assert (Hge : fold_right Rplus 0 (map (fun p => p * - ln (pmax + 1 / 1000000000)) l)
                  <= Ha).
    { rewrite HHa. apply sum_map_le. intros p Hp.
      specialize (Hp0 p Hp). specialize (Hpmax p Hp).
      assert (ln (p + 1 / 1000000000) <= ln (pmax + 1 / 1000000000))
        by (apply ln_le_of_le; lra).
      nra. }
    rewrite (sum_map_mul_r (fun p => p)), Hw in Hge. lra. }
  split; [| split; [| split; [| split]]].
  - exact Hwell.
  - (* β = 1 past r_high *)
    change (beta Ha = 1). unfold beta.
    destruct (Rgt_dec Ha (1 / 2)); [| reflexivity].
    apply Rmax_left.
    destruct (Rle_lt_dec Ha (5945/1000)).
    + left. rewrite <- Hph. apply P_decreasing_high; lra.
    + left. apply P_below_high. lra.
  - exact (beta_ge_1 H).
  - intro Hgt. exact (sharpening rl rh H Hl Hpl Hhr Hph Hgt).
  - split.
    + exact (beta_le_peak h H Hdh Hpk).
    + apply exp_le_of_le. apply Rmult_le_compat_l; [lra |].
      exact (beta_le_peak h H Hdh Hpk).
Qed.
