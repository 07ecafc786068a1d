/** A place in a `Queue`, to leave it from in O(1). */
export interface Place<T> {
  readonly value: T;
  prev: Place<T> | undefined;
  next: Place<T> | undefined;
  /** False once shifted or removed. */
  queued: boolean;
}

/**
 * A first-in, first-out queue as a doubly linked list: a waiter leaves it in O(1) when its signal
 * aborts, so that cancelling 100,000 queued calls at once takes linear time, not quadratic.
 */
export class Queue<T> {
  #head: Place<T> | undefined;
  #tail: Place<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value` at the back, or at the front. */
  add(value: T, front = false): Place<T> {
    const place: Place<T> = { value, prev: undefined, next: undefined, queued: true };
    if (!this.#head || !this.#tail) {
      this.#head = place;
      this.#tail = place;
    } else if (front) {
      place.next = this.#head;
      this.#head.prev = place;
      this.#head = place;
    } else {
      place.prev = this.#tail;
      this.#tail.next = place;
      this.#tail = place;
    }
    this.#size += 1;
    return place;
  }

  /** Takes the value at the front. */
  shift(): T | undefined {
    const place = this.#head;
    if (!place) return undefined;
    this.remove(place);
    return place.value;
  }

  remove(place: Place<T>): void {
    if (!place.queued) return;
    place.queued = false;
    if (place.prev) place.prev.next = place.next;
    else this.#head = place.next;
    if (place.next) place.next.prev = place.prev;
    else this.#tail = place.prev;
    place.prev = undefined;
    place.next = undefined;
    this.#size -= 1;
  }
}
