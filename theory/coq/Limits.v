(* Limits at +oo that T3 and T10 share, in Coquelicot's is_lim.  Hand-written. *)
From Coq Require Import Reals Lra Psatz.
From Coquelicot Require Import Coquelicot.
Open Scope R_scope.

Lemma lim_inv_id : is_lim (fun x => / x) p_infty 0.
Proof.
  apply (is_lim_inv (fun y => y) p_infty p_infty); [apply is_lim_id | discriminate].
Qed.

(* a + b / x -> a. *)
Lemma lim_plus_inv (a b : R) : is_lim (fun x => a + b * / x) p_infty a.
Proof.
  replace (Finite a) with (Finite (a + b * 0)) by (f_equal; ring).
  apply is_lim_plus'; [apply is_lim_const |].
  exact (is_lim_scal_l (fun x => / x) b p_infty 0 lim_inv_id).
Qed.

Lemma lim_div_finite (f g : R -> R) (lf lg : R) :
  is_lim f p_infty lf -> is_lim g p_infty lg -> lg <> 0 ->
  is_lim (fun x => f x / g x) p_infty (lf / lg).
Proof.
  intros Hf Hg Hlg.
  apply (is_lim_div f g p_infty lf lg Hf Hg); [intro H; injection H; exact Hlg | exact I].
Qed.

(* Eventually, x is larger than any given bound. *)
Lemma eventually_above (b : R) (P : R -> Prop) :
  (forall x, b < x -> P x) -> Rbar_locally' p_infty P.
Proof. intros H. exists b. exact H. Qed.

(* (a x + b) / (c x + d) -> a / c when c <> 0. *)
Lemma lim_ratio (a b c d : R) :
  c <> 0 -> is_lim (fun x => (a * x + b) / (c * x + d)) p_infty (a / c).
Proof.
  intros Hc.
  apply is_lim_ext_loc with (fun x => (a + b * / x) / (c + d * / x)).
  - apply (eventually_above (Rabs (- d / c) + 1)). intros x Hx.
    pose proof (Rle_abs (- d / c)) as Habs. pose proof (Rabs_pos (- d / c)) as Habs0.
    assert (Hx0 : x <> 0) by lra.
    assert (Hcx : c * x + d <> 0).
    { intro Hz. assert (Hxe : x = - d / c) by (field_simplify_eq; lra). lra. }
    assert (Hcx' : c + d * / x <> 0).
    { intro Hz. apply Hcx. replace (c * x + d) with ((c + d * / x) * x) by (field; exact Hx0).
      rewrite Hz. ring. }
    field. repeat split; assumption.
  - apply lim_div_finite; [apply lim_plus_inv | apply lim_plus_inv | exact Hc].
Qed.

Lemma Rbar_mult_neg_p_infty (a : R) : a < 0 -> Rbar_mult a p_infty = m_infty.
Proof.
  intros Ha. simpl. destruct (Rle_dec 0 a) as [H | H]; [exfalso; lra | reflexivity].
Qed.

(* x^(-q) -> 0 for q > 0. *)
Lemma lim_rpower_neg (q : R) : 0 < q -> is_lim (fun x => Rpower x (- q)) p_infty 0.
Proof.
  intros Hq. unfold Rpower.
  apply (is_lim_comp exp (fun x => - q * ln x) p_infty 0 m_infty).
  - exact is_lim_exp_m.
  - rewrite <- (Rbar_mult_neg_p_infty (- q)) by lra.
    exact (is_lim_scal_l ln (- q) p_infty p_infty is_lim_ln_p).
  - exists 0. intros x _. discriminate.
Qed.

Lemma lim_mult_finite (f g : R -> R) (lf lg : R) :
  is_lim f p_infty lf -> is_lim g p_infty lg -> is_lim (fun x => f x * g x) p_infty (lf * lg).
Proof.
  intros Hf Hg. apply (is_lim_mult f g p_infty lf lg Hf Hg). exact I.
Qed.

(* For x > 0: x^(q+1) = x / x^(-q) and x^(1-q) = x · x^(-q). *)
Lemma rpower_succ (x q : R) : 0 < x -> Rpower x (q + 1) = x / Rpower x (- q).
Proof.
  intros Hx. rewrite Rpower_plus, Rpower_1 by exact Hx. rewrite Rpower_Ropp.
  field. unfold Rpower. apply exp_neq_0.
Qed.

Lemma rpower_one_minus (x q : R) : 0 < x -> Rpower x (1 - q) = x * Rpower x (- q).
Proof.
  intros Hx. unfold Rminus. rewrite Rpower_plus, Rpower_1 by exact Hx. reflexivity.
Qed.

(* The paper's form of T10's three regimes, for a real exponent a = s·δ: the spike's top
   coefficient x^a/(x^a + x − 1) under β = s·ln x tends to 1, 1/2 or 0 as a >, =, < 1.
   (A lemma with a hand-written statement: T10's printed statement gives the regimes
   sδ = 1 ± q as instances of it.) *)
Lemma spike_limit_regimes (a : R) :
  (1 < a -> is_lim (fun x => Rpower x a / (x + Rpower x a - 1)) p_infty 1) /\
  (a = 1 -> is_lim (fun x => Rpower x a / (x + Rpower x a - 1)) p_infty (1 / 2)) /\
  (a < 1 -> is_lim (fun x => Rpower x a / (x + Rpower x a - 1)) p_infty 0).
Proof.
  split; [| split]; intros Ha.
  - (* a = q + 1: x^a/(x + x^a − 1) = 1/(1 + u − u/x) with u = x^(−q) -> 0 *)
    set (q := a - 1). assert (Hq : 0 < q) by (unfold q; lra).
    set (u := fun x => Rpower x (- q)).
    assert (Hu0 : forall x, 0 < u x) by (intro x; unfold u, Rpower; apply exp_pos).
    apply is_lim_ext_loc with (fun x => 1 / (1 + u x - u x * / x)).
    + apply (eventually_above 1). intros x Hx.
      replace a with (q + 1) by (unfold q; ring).
      rewrite rpower_succ by lra. fold (u x). pose proof (Hu0 x).
      assert (0 < u x * / x) by (apply Rmult_lt_0_compat; [| apply Rinv_0_lt_compat]; lra).
      assert (u x * / x < u x).
      { rewrite <- (Rmult_1_r (u x)) at 2. apply Rmult_lt_compat_l; [lra |].
        rewrite <- Rinv_1. apply Rinv_lt_contravar; lra. }
      field. repeat split; try lra. nra.
    + replace (Finite 1) with (Finite (1 / (1 + 0 - 0 * 0))) by (f_equal; field).
      apply lim_div_finite; [apply is_lim_const | | lra].
      apply is_lim_minus'; [apply is_lim_plus'; [apply is_lim_const | exact (lim_rpower_neg q Hq)] |].
      apply lim_mult_finite; [exact (lim_rpower_neg q Hq) | exact lim_inv_id].
  - (* a = 1: x/(2x − 1) -> 1/2 *)
    apply is_lim_ext_loc with (fun x => (1 * x + 0) / (2 * x + - 1)).
    + apply (eventually_above 0). intros x Hx. rewrite Ha, Rpower_1 by lra. f_equal; ring.
    + apply lim_ratio. lra.
  - (* a = 1 − q: x^a/(x + x^a − 1) = u/(1 + u − 1/x) with u = x^(−q) -> 0 *)
    set (q := 1 - a). assert (Hq : 0 < q) by (unfold q; lra).
    set (u := fun x => Rpower x (- q)).
    assert (Hu0 : forall x, 0 < u x) by (intro x; unfold u, Rpower; apply exp_pos).
    apply is_lim_ext_loc with (fun x => u x / (1 + u x - / x)).
    + apply (eventually_above 1). intros x Hx.
      replace a with (1 - q) by (unfold q; ring).
      rewrite rpower_one_minus by lra. fold (u x). pose proof (Hu0 x).
      assert (/ x < 1) by (rewrite <- Rinv_1; apply Rinv_lt_contravar; lra).
      field. repeat split; try lra. nra.
    + replace (Finite 0) with (Finite (0 / (1 + 0 - 0))) by (f_equal; field).
      apply lim_div_finite; [exact (lim_rpower_neg q Hq) | | lra].
      apply is_lim_minus'; [apply is_lim_plus'; [apply is_lim_const | exact (lim_rpower_neg q Hq)] |].
      exact lim_inv_id.
Qed.
