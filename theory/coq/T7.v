(* T7: the entropy's temperature derivative, over a list of logits.
   With A_r(θ) = Σ e_j^r exp(e_j/θ) and B_r(β) = Σ e_j^r exp(β e_j) (β = 1/θ), the list
   sums are differentiated term by term (is_derive_lsum), the closed forms by
   Coquelicot's rules (auto_derive).
   Covers: for any non-empty list of logits and θ > 0, the entropy H and the variance Var of
     softmax(βe) equal their closed forms ln B₀ − β B₁/B₀ = ln A₀ − A₁/(θ A₀) and
     B₂/B₀ − (B₁/B₀)² = A₂/A₀ − (A₁/A₀)², Var >= 0, and the closed forms are differentiable
     with derivatives Var/θ³ >= 0 in θ and −β Var <= 0 in β (Coquelicot's is_derive).
   Leaves out: nothing of the sympy claim; the derivatives are those of the closed forms,
     which equal H at every θ > 0 (the sympy claim states them so), not of H's sum taken
     as a function of θ directly. *)
From Coq Require Import Reals List Lra Psatz.
From Coquelicot Require Import Coquelicot.
From SoftmaxDispersion Require Import Statements Lemmas ListSums.
Open Scope R_scope.

(* The derivative of a finite sum is the sum of the derivatives. *)
Lemma is_derive_lsum (f : R -> R -> R) (df : R -> R) (l : list R) (x : R) :
  (forall e, In e l -> is_derive (f e) x (df e)) ->
  is_derive (fun y => fold_right Rplus 0 (map (fun e => f e y) l)) x
    (fold_right Rplus 0 (map df l)).
Proof.
  induction l as [| e l IH]; intros H; cbn [map fold_right].
  - apply (is_derive_const 0 x).
  - apply (is_derive_plus (f e) (fun y => fold_right Rplus 0 (map (fun e0 => f e0 y) l))).
    + apply H. left. reflexivity.
    + apply IH. intros e' He'. apply H. right. exact He'.
Qed.

(* A sum of exponential terms over a non-empty list is positive. *)
Lemma exp_sum_pos (g : R -> R) (l : list R) :
  l <> nil -> 0 < fold_right Rplus 0 (map (fun e => exp (g e)) l).
Proof. intros Hl. apply lsum_pos; [exact Hl | intros; apply exp_pos]. Qed.

(* −Σ p ln p = ln Z − β Σ e exp(β e)/Z, with p = exp(β e)/Z and Z = Σ exp(β e). *)
Lemma entropy_sum (l : list R) (beta Z : R) :
  0 < Z -> Z = fold_right Rplus 0 (map (fun e => exp (beta * e)) l) ->
  fold_right Rplus 0 (map (fun e => - exp (beta * e) * ln (exp (beta * e) / Z) / Z) l)
  = - beta * fold_right Rplus 0 (map (fun e => e * exp (beta * e)) l) / Z + ln Z.
Proof.
  intros HZ0 HZ.
  rewrite (lsum_ext _
    (fun e => (- beta / Z) * (e * exp (beta * e)) + (ln Z / Z) * exp (beta * e))).
  - rewrite lsum_lin2, <- HZ. field. lra.
  - intros e _. rewrite ln_div_pos, ln_exp by (apply exp_pos || lra). field. lra.
Qed.

(* Σ p (e − μ)² = Σ e² exp(β e)/Z − (Σ e exp(β e)/Z)², with μ = Σ p e. *)
Lemma variance_sum (l : list R) (beta Z mu : R) :
  0 < Z -> Z = fold_right Rplus 0 (map (fun e => exp (beta * e)) l) ->
  mu = fold_right Rplus 0 (map (fun e => e * exp (beta * e) / Z) l) ->
  fold_right Rplus 0 (map (fun e => (e - mu) ^ 2 * exp (beta * e) / Z) l)
  = fold_right Rplus 0 (map (fun e => e ^ 2 * exp (beta * e)) l) / Z
    - fold_right Rplus 0 (map (fun e => e * exp (beta * e)) l) ^ 2 / Z ^ 2.
Proof.
  intros HZ0 HZ Hmu.
  assert (Hmu' : mu = / Z * fold_right Rplus 0 (map (fun e => e * exp (beta * e)) l)).
  { rewrite Hmu, <- lsum_scal. apply lsum_ext. intros e _. field. lra. }
  rewrite (lsum_ext _
    (fun e => / Z * (e ^ 2 * exp (beta * e)) + (- 2 * mu / Z) * (e * exp (beta * e))
              + (mu ^ 2 / Z) * exp (beta * e))).
  - rewrite lsum_lin3, <- HZ, Hmu'. field. lra.
  - intros e _. field. lra.
Qed.

Theorem T7 : T7_statement.
Proof.
  unfold T7_statement.
  intros H beta mu n theta var A0 A1 A2 B0 B1 B2 l Hlen HA0 HA1 HA2 HB0 HB1 HB2 Hmu HH Hvar
    Htheta Hbeta Hn.
  assert (Hl : l <> nil) by exact (nonempty_of_length l n Hlen Hn).
  assert (Hbeta0 : 0 < beta) by (rewrite Hbeta; apply Rdiv_lt_0_compat; lra).
  assert (HB0pos : forall b, 0 < B0 b) by (intro b; rewrite HB0; apply exp_sum_pos, Hl).
  assert (HA0pos : forall t, 0 < A0 t) by (intro t; rewrite HA0; apply exp_sum_pos, Hl).
  (* A_r(θ) = B_r(β): e/θ = β e *)
  assert (Hsame : forall e, e / theta = beta * e) by (intro e; rewrite Hbeta; field; lra).
  assert (HAB0 : A0 theta = B0 beta).
  { rewrite HA0, HB0. apply lsum_ext. intros e _. rewrite Hsame. reflexivity. }
  assert (HAB1 : A1 theta = B1 beta).
  { rewrite HA1, HB1. apply lsum_ext. intros e _. rewrite Hsame. reflexivity. }
  assert (HAB2 : A2 theta = B2 beta).
  { rewrite HA2, HB2. apply lsum_ext. intros e _. rewrite Hsame. reflexivity. }
  (* the entropy and the variance in closed form *)
  assert (HHB : H = - beta * B1 beta / B0 beta + ln (B0 beta)).
  { rewrite HH, (HB1 beta). apply entropy_sum; [apply HB0pos | apply HB0]. }
  assert (HVB : var = B2 beta / B0 beta - B1 beta ^ 2 / B0 beta ^ 2).
  { rewrite Hvar, (HB1 beta), (HB2 beta).
    apply variance_sum; [apply HB0pos | apply HB0 | exact Hmu]. }
  assert (HVA : var = A2 theta / A0 theta - A1 theta ^ 2 / A0 theta ^ 2).
  { rewrite HAB0, HAB1, HAB2. exact HVB. }
  assert (HV0 : var >= 0).
  { rewrite Hvar. apply Rle_ge, lsum_nonneg. intros e _.
    pose proof (HB0pos beta). pose proof (exp_pos (beta * e)).
    apply Rmult_le_pos; [apply Rmult_le_pos; [apply pow2_ge_0 | lra] |].
    left. apply Rinv_0_lt_compat. lra. }
  (* the sums' derivatives, term by term *)
  assert (DB : forall r (B Bn : R -> R), (forall b, B b = fold_right Rplus 0
      (map (fun e => e ^ r * exp (b * e)) l)) ->
      (forall b, Bn b = fold_right Rplus 0 (map (fun e => e ^ (S r) * exp (b * e)) l)) ->
      is_derive B beta (Bn beta)).
  { intros r B Bn HB HBn.
    apply (is_derive_ext (fun y => fold_right Rplus 0 (map (fun e => e ^ r * exp (y * e)) l)));
      [intro t; symmetry; apply HB |].
    rewrite HBn. apply (is_derive_lsum (fun e y => e ^ r * exp (y * e))).
    intros e _. auto_derive; [exact I | simpl; ring]. }
  assert (DB0 : is_derive B0 beta (B1 beta)).
  { apply (DB 0%nat); intro b; [rewrite HB0 | rewrite HB1]; apply lsum_ext; intros e _;
      simpl; ring. }
  assert (DB1 : is_derive B1 beta (B2 beta)).
  { apply (DB 1%nat); intro b; [rewrite HB1 | rewrite HB2]; apply lsum_ext; intros e _;
      simpl; ring. }
  assert (DA : forall r (A An : R -> R), (forall t, A t = fold_right Rplus 0
      (map (fun e => e ^ r * exp (e / t)) l)) ->
      (forall t, An t = fold_right Rplus 0 (map (fun e => e ^ (S r) * exp (e / t)) l)) ->
      is_derive A theta (- An theta / theta ^ 2)).
  { intros r A An HA HAn.
    apply (is_derive_ext (fun y => fold_right Rplus 0 (map (fun e => e ^ r * exp (e / y)) l)));
      [intro t; symmetry; apply HA |].
    replace (- An theta / theta ^ 2) with
      (fold_right Rplus 0 (map (fun e => (- / theta ^ 2) * (e ^ (S r) * exp (e / theta))) l)).
    2: { rewrite lsum_scal, HAn. field. lra. }
    apply (is_derive_lsum (fun e y => e ^ r * exp (e / y))).
    intros e _. auto_derive; [lra | simpl; unfold Rdiv; field; lra]. }
  assert (DA0 : is_derive A0 theta (- A1 theta / theta ^ 2)).
  { apply (DA 0%nat); intro t; [rewrite HA0 | rewrite HA1]; apply lsum_ext; intros e _;
      simpl; ring. }
  assert (DA1 : is_derive A1 theta (- A2 theta / theta ^ 2)).
  { apply (DA 1%nat); intro t; [rewrite HA1 | rewrite HA2]; apply lsum_ext; intros e _;
      simpl; ring. }
  (* the closed forms' derivatives *)
  assert (DHB : is_derive (fun b : R => - b * B1 b / B0 b + ln (B0 b)) beta (- beta * var)).
  { pose proof (HB0pos beta). auto_derive.
    - repeat split; first [lra | eexists; eassumption].
    - replace (Derive (fun x => B0 x) beta) with (B1 beta)
        by (symmetry; apply is_derive_unique; exact DB0).
      replace (Derive (fun x => B1 x) beta) with (B2 beta)
        by (symmetry; apply is_derive_unique; exact DB1).
      rewrite HVB. field. lra. }
  assert (DHA : is_derive (fun t : R => ln (A0 t) - A1 t / (t * A0 t)) theta (var / theta ^ 3)).
  { pose proof (HA0pos theta). auto_derive.
    - repeat split; first [lra | eexists; eassumption | nra].
    - replace (Derive (fun x => A0 x) theta) with (- A1 theta / theta ^ 2)
        by (symmetry; apply is_derive_unique; exact DA0).
      replace (Derive (fun x => A1 x) theta) with (- A2 theta / theta ^ 2)
        by (symmetry; apply is_derive_unique; exact DA1).
      rewrite HVA. field. lra. }
  assert (HHA : H = ln (A0 theta) - A1 theta / (theta * A0 theta)).
  { rewrite HHB, HAB0, HAB1. pose proof (HB0pos beta).
    set (Z := B0 beta) in *. set (Z1 := B1 beta) in *.
    rewrite Hbeta. field. split; lra. }
  split; [| split; [| split; [| split; [| split; [| split; [| split; [| split]]]]]]].
  - exact HV0.
  - exact HHB.
  - exact HHA.
  - rewrite (is_derive_unique _ _ _ DHB). nra.
  - exact HVA.
  - exact HVB.
  - rewrite (is_derive_unique _ _ _ DHA). apply Rle_ge, Rmult_le_pos; [lra |].
    left. apply Rinv_0_lt_compat. apply pow_lt. exact Htheta.
  - exact DHB.
  - exact DHA.
Qed.
